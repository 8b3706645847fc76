"""YAML launch files -> entities -> processes: every tag of the supported subset, and the errors
(file, line, tag) for what is not supported. No process is started here."""

from __future__ import annotations

import os
import textwrap

import pytest
import yaml

from lerobot_ros.launch_runner import LaunchError, evaluate_file, parse_file
from lerobot_ros.launch_runner import entities as E


@pytest.fixture(autouse=True)
def _temp_params_in_tmp_path(tmp_path, monkeypatch):
    """Generated parameter files land in the test's folder, not in /tmp."""
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))


@pytest.fixture
def write(tmp_path):
    def _write(text: str, name: str = "t.launch.yaml") -> str:
        path = tmp_path / name
        path.write_text(textwrap.dedent(text))
        return str(path)

    return _write


def plan_of(path, env=None, **args):
    return evaluate_file(
        path, {k: str(v) for k, v in args.items()}, environ=env if env is not None else dict(os.environ)
    )


def node(plan, label):
    return next(p for p in plan.processes if p.label == label)


def ros_args(proc) -> list[str]:
    """The arguments after the last --ros-args (the ones the runner adds)."""
    idx = len(proc.cmd) - 1 - proc.cmd[::-1].index("--ros-args")
    return proc.cmd[idx + 1 :]


def params_of(proc) -> list[dict]:
    out = []
    for i, a in enumerate(proc.cmd):
        if a == "--params-file":
            with open(proc.cmd[i + 1]) as f:
                out.append(yaml.safe_load(f))
    return out


def test_typed_entities(write):
    path = write("""\
        launch:
        - arg: {name: a, default: x, description: the a}
        - let: {name: b, value: y}
        - group:
            scoped: false
            children:
            - set_env: {name: E, value: v}
        - node: {pkg: lerobot_ros, exec: talker}
        """)
    lf = parse_file(path)
    assert [type(e) for e in lf.entities] == [E.Arg, E.Let, E.Group, E.Node]
    arg = lf.entities[0]
    assert (arg.name, arg.description, arg.line, arg.tag) == ("a", "the a", 2, "arg")
    assert lf.entities[2].scoped is False and isinstance(lf.entities[2].children[0], E.SetEnv)
    assert lf.entities[3].line == 8


def test_arg_default_required_choices_and_override(write):
    path = write("""\
        launch:
        - arg: {name: robot, default: so101, description: which arm}
        - arg: {name: mode, default: sim, choice: [{value: sim}, {value: real}]}
        - arg: {name: port}
        - let: {name: out, value: "$(var robot)-$(var mode)-$(var port)"}
        """)
    plan = plan_of(path, port="/dev/ttyACM0")
    assert plan.configs["out"] == "so101-sim-/dev/ttyACM0"
    assert plan_of(path, port="p", robot="koch").configs["out"] == "koch-sim-p"
    assert [(d.name, d.default, d.description) for d in plan.declared][:2] == [
        ("robot", "so101", "which arm"),
        ("mode", "sim", None),
    ]
    with pytest.raises(LaunchError, match=r"t.launch.yaml:4: <arg> required argument 'port' was not given"):
        plan_of(path)
    with pytest.raises(LaunchError, match=r":3: <arg> argument 'mode' is 'fake', valid choices are: sim, real"):
        plan_of(path, port="p", mode="fake")


def test_let_if_unless_and_conditions(write):
    path = write("""\
        launch:
        - arg: {name: flag, default: "true"}
        - let: {name: a, value: "1", if: $(var flag)}
        - let: {name: a, value: "2", unless: $(var flag)}
        - let: {name: b, value: "on", if: "$(and $(var flag) $(not false))"}
        - let: {name: c, value: "on", if: "0"}
        """)
    assert plan_of(path).configs["a"] == "1" and plan_of(path).configs["b"] == "on"
    assert plan_of(path, flag="False").configs["a"] == "2" and "c" not in plan_of(path).configs
    with pytest.raises(LaunchError, match=r":3: <let> 'if' condition must be true, false, 1 or 0, got 'maybe'"):
        plan_of(path, flag="maybe")


def test_set_env_unset_env_and_node_env(write):
    path = write("""\
        launch:
        - set_env: {name: LR_A, value: one}
        - unset_env: {name: LR_GONE}
        - let: {name: seen, value: $(env LR_A)}
        - node:
            pkg: lerobot_ros
            exec: talker
            env: [{name: LR_B, value: "$(env LR_A)-two"}]
        """)
    plan = plan_of(path, env={"LR_GONE": "x", "PATH": os.environ["PATH"]})
    proc = plan.processes[0]
    assert plan.configs["seen"] == "one"
    assert proc.env["LR_A"] == "one" and proc.env["LR_B"] == "one-two" and "LR_GONE" not in proc.env


def test_node_command_line(write):
    path = write("""\
        launch:
        - node:
            pkg: lerobot_ros
            exec: talker
            name: cam
            namespace: robot
            exec_name: camera
            output: both
            args: "--flag 'two words' $(dirname)/x.yaml"
            ros_args: "--log-level debug"
            respawn: "true"
            respawn_delay: 1.5
            remap:
            - {from: joint_states, to: /follower/joint_states}
            - {from: image, to: $(var img)}
        """)
    proc = plan_of(path, img="front/image_raw").processes[0]
    exe = proc.cmd[0]
    assert exe.endswith(os.path.join("lib", "lerobot_ros", "talker")) and os.access(exe, os.X_OK)
    folder = os.path.dirname(path)
    assert proc.cmd[1:9] == [
        "--flag",
        "two words",
        f"{folder}/x.yaml",
        "--ros-args",
        "--log-level",
        "debug",
        "--ros-args",
        "-r",
    ]
    assert ros_args(proc) == [
        "-r",
        "__node:=cam",
        "-r",
        "__ns:=/robot",
        "-r",
        "joint_states:=/follower/joint_states",
        "-r",
        "image:=front/image_raw",
    ]
    assert (proc.label, proc.node_name, proc.namespace, proc.output) == ("camera", "cam", "/robot", "both")
    assert proc.respawn is True and proc.respawn_delay == 1.5 and proc.source.endswith("t.launch.yaml:2")


def test_params_file_types_nested_and_from(write, tmp_path):
    extra = tmp_path / "extra.yaml"
    extra.write_text("/**:\n  ros__parameters:\n    fps: 30\n")
    templated = tmp_path / "templ.yaml"
    templated.write_text("/**:\n  ros__parameters:\n    port: $(var port)\n")
    path = write(f"""\
        launch:
        - arg: {{name: port, default: /dev/ttyACM0}}
        - node:
            pkg: lerobot_ros
            exec: talker
            name: talker
            namespace: /sim
            param:
            - {{name: i, value: 3}}
            - {{name: f, value: 2.5}}
            - {{name: b, value: true}}
            - {{name: s, value: hello}}
            - {{name: from_subst, value: $(var port)}}
            - {{name: num_subst, value: "$(eval '2 * 21')"}}
            - {{name: bool_subst, value: "$(not true)"}}
            - {{name: forced_str, value: "42", type: str}}
            - {{name: lst, value: [1, 2, 3]}}
            - {{name: names, value: [a, $(var port)]}}
            - name: gains
              param:
              - {{name: p, value: 1.0}}
              - {{name: d, value: 0.1}}
            - {{from: {extra}}}
            - {{from: {templated}, allow_substs: true}}
            - {{name: after, value: 1}}
        - node: {{pkg: lerobot_ros, exec: listener, param: [{{name: x, value: 1}}]}}
        """)
    plan = plan_of(path)
    first, second, third, fourth = params_of(plan.processes[0])
    assert first == {
        "/sim/talker": {
            "ros__parameters": {
                "i": 3,
                "f": 2.5,
                "b": True,
                "s": "hello",
                "from_subst": "/dev/ttyACM0",
                "num_subst": 42,
                "bool_subst": False,
                "forced_str": "42",
                "lst": [1, 2, 3],
                "names": ["a", "/dev/ttyACM0"],
                "gains": {"p": 1.0, "d": 0.1},
            }
        }
    }
    assert second == {"/**": {"ros__parameters": {"fps": 30}}}
    assert third == {"/**": {"ros__parameters": {"port": "/dev/ttyACM0"}}}
    assert fourth == {"/sim/talker": {"ros__parameters": {"after": 1}}}
    # No name or no namespace: the parameters apply to any node in the process, as launch_ros writes them.
    assert params_of(plan.processes[1]) == [{"/**": {"ros__parameters": {"x": 1}}}]
    plan.cleanup()
    assert not any(os.path.exists(p) for p in plan.temp_files)


def test_push_ros_namespace_and_group_scoping(write):
    path = write("""\
        launch:
        - group:
            children:
            - push-ros-namespace: {namespace: robot}
            - push_ros_namespace: {namespace: arm}
            - let: {name: inner, value: "1"}
            - node: {pkg: lerobot_ros, exec: talker, name: a}
            - node: {pkg: lerobot_ros, exec: talker, name: b, namespace: sub}
            - node: {pkg: lerobot_ros, exec: talker, name: c, namespace: /abs}
        - node: {pkg: lerobot_ros, exec: talker, name: d}
        - group:
          - push-ros-namespace: {namespace: /other}
          - node: {pkg: lerobot_ros, exec: listener}
        """)
    plan = plan_of(path)
    spaces = {p.label: p.namespace for p in plan.processes}
    assert spaces == {"a": "/robot/arm", "b": "/robot/arm/sub", "c": "/abs", "d": None, "listener": "/other"}
    assert "inner" not in plan.configs and "ros_namespace" not in plan.configs
    assert "-r" in ros_args(node(plan, "a")) and "__ns:=/robot/arm" in ros_args(node(plan, "a"))
    assert not any(a.startswith("__ns:=") for a in ros_args(node(plan, "d")))


def test_group_unscoped_and_forwarding_false_with_keep(write):
    path = write("""\
        launch:
        - let: {name: outer, value: o}
        - group:
            scoped: false
            children:
            - let: {name: leaked, value: "yes"}
        - group:
            forwarding: false
            keep: [{name: kept, value: "$(var outer)!"}]
            children:
            - let: {name: seen, value: "$(var kept)"}
            - let: {name: copied, value: "$(var seen)"}
            - group:
                scoped: false
                children: [{let: {name: probe, value: "$(var outer)"}}]
        """)
    with pytest.raises(LaunchError, match=r":15: <let> value of 'probe': launch configuration 'outer' is not set"):
        plan_of(path)
    ok = path.replace(".launch.yaml", "_ok.launch.yaml")
    with open(path) as src, open(ok, "w") as dst:
        dst.write("".join(src.readlines()[:11]))
    plan = plan_of(ok)
    assert plan.configs["leaked"] == "yes" and "seen" not in plan.configs and plan.configs["outer"] == "o"


def test_include_with_args_dirname_and_conditions(write):
    write(
        """\
        launch:
        - arg: {name: robot_ns}
        - arg: {name: rate, default: "10.0"}
        - node:
            pkg: lerobot_ros
            exec: talker
            name: talker
            namespace: $(var robot_ns)
            param: [{name: rate_hz, value: $(var rate)}, {name: frame_id, value: $(dirname)}]
        """,
        name="child.launch.yaml",
    )
    path = write("""\
        launch:
        - include:
            file: $(dirname)/child.launch.yaml
            arg: [{name: robot_ns, value: leader}]
        - include:
            file: child.launch.yaml
            arg: [{name: robot_ns, value: follower}, {name: rate, value: "5.0"}]
        - include: {file: child.launch.yaml, if: "false"}
        """)
    plan = plan_of(path)
    assert [p.namespace for p in plan.processes] == ["/leader", "/follower"]
    assert [p.label for p in plan.processes] == ["talker", "talker-2"]
    p0, p1 = (params_of(p)[0] for p in plan.processes)
    assert p0["/leader/talker"]["ros__parameters"] == {"rate_hz": 10.0, "frame_id": os.path.dirname(path)}
    assert p1["/follower/talker"]["ros__parameters"]["rate_hz"] == 5.0
    # includes are not scoped (as in launch): the included file's configurations stay visible
    assert plan.configs["robot_ns"] == "follower"


def test_executable_and_log(write):
    path = write("""\
        launch:
        - log: {message: "hello $(var who)"}
        - executable: {cmd: "echo 'a b' $(var who)", name: echo1, cwd: /tmp, output: screen}
        - executable: {cmd: "echo $HOME", shell: true}
        """)
    plan = plan_of(path, who="me")
    assert plan.messages == [("INFO", "hello me")]
    assert plan.processes[0].cmd == ["echo", "a b", "me"] and plan.processes[0].cwd == "/tmp"
    assert plan.processes[1].cmd == ["/bin/sh", "-c", "echo $HOME"]
    assert [p.label for p in plan.processes] == ["echo1", "sh"]


@pytest.mark.parametrize(
    "body, where, message",
    [
        ("- nodes: {pkg: a, exec: b}", ":2: <nodes> ", "unsupported tag 'nodes'"),
        ("- timer: {period: 1.0}", ":2: <timer> ", "unsupported tag 'timer'"),
        ("- node: {pkg: lerobot_ros, exec: talker, parameters: []}", ":2: <node> ", "unknown attribute 'parameters'"),
        (
            "- arg:\n    name: a\n    default: 30",
            ":4: <arg> ",
            "attribute 'default' must be a string, got int 30 \\(quote it: '30'\\)",
        ),
        (
            "- let: {name: a, value: x, if: true}",
            ":2: <let> ",
            "attribute 'if' must be a string, got bool True \\(quote it: 'true'\\)",
        ),
        ("- let: {name: a}", ":2: <let> ", "missing required attribute 'value'"),
        ("- let: {name: a, value: '$(bogus x)'}", ":2: <let> ", "unknown substitution '\\$\\(bogus"),
        ("- let: {name: a, value: '$(var a b c)'}", ":2: <let> ", "takes 1 or 2 argument"),
        (
            "- node: {pkg: lerobot_ros, exec: talker, respawn_delay: 2}",
            ":2: <node> ",
            "must be a float, got 2 \\(write it with a decimal point",
        ),
        ("- node: {pkg: lerobot_ros, exec: talker, on_exit: restart}", ":2: <node> ", "supports only 'shutdown'"),
        (
            "- node:\n    pkg: lerobot_ros\n    exec: talker\n    param:\n    - {name: a, value: 1, from: x.yaml}",
            ":6: <param> ",
            "'from' cannot be combined",
        ),
        (
            "- node:\n    pkg: lerobot_ros\n    exec: talker\n    param:\n    - {name: a}",
            ":6: <param> ",
            "needs either 'value' or nested 'param'",
        ),
        (
            "- node:\n    pkg: lerobot_ros\n    exec: talker\n    param:\n    - {name: a, value: [1, x]}",
            ":6: <param> ",
            "one type",
        ),
        (
            "- node:\n    pkg: lerobot_ros\n    exec: talker\n    remap: [{from: a}]",
            ":5: <remap> ",
            "missing required attribute 'to'",
        ),
        ("- group: {scoped: false}", ":2: <group> ", "missing required attribute 'children'"),
        ("- {let: {name: a, value: b}, arg: {name: c}}", ":2: ", "exactly one key"),
        ("- let: [a, b]", ":2: <let> ", "must be a mapping"),
    ],
)
def test_unsupported_constructs_name_file_line_and_tag(write, body, where, message):
    path = write("launch:\n" + body + "\n")
    with pytest.raises(LaunchError, match=f"t.launch.yaml{where}.*{message}"):
        plan_of(path)


@pytest.mark.parametrize(
    "text, message",
    [
        ("launch:\n- let: {name: a, value: b\n", "t.launch.yaml:3: invalid YAML"),
        (
            "nodes:\n- let: {name: a, value: b}\n",
            "t.launch.yaml:1: the root of a YAML launch file must be a single key 'launch:'",
        ),
        ("launch: {let: {name: a, value: b}}\n", "t.launch.yaml:1: 'launch' must be a list of entities"),
        ("launch:\n- let: {name: a, name: b, value: c}\n", "t.launch.yaml:2: duplicate key 'name'"),
    ],
)
def test_malformed_files(write, text, message):
    with pytest.raises(LaunchError, match=message):
        plan_of(write(text))


@pytest.mark.parametrize(
    "body, message",
    [
        (
            "- node: {pkg: lerobot_ros, exec: nosuch}",
            ":2: <node> executable 'nosuch' not found in .*lib/lerobot_ros \\(available: .*talker",
        ),
        ("- node: {pkg: no_such_pkg, exec: x}", ":2: <node> package 'no_such_pkg' not found in the ament index"),
        ("- node: {pkg: lerobot_ros, exec: talker, name: 9bad}", ":2: <node> invalid node name '9bad'"),
        ("- node: {pkg: lerobot_ros, exec: talker, namespace: 'a b'}", ":2: <node> invalid namespace '/a b'"),
        ("- node: {pkg: lerobot_ros, exec: talker, output: loud}", ":2: <node> output must be one of"),
        (
            "- node: {pkg: lerobot_ros, exec: talker, respawn: 'sometimes'}",
            ":2: <node> respawn must be true, false, 1 or 0",
        ),
        (
            "- node:\n    pkg: lerobot_ros\n    exec: talker\n    param: [{from: /no/such.yaml}]",
            ":5: <node> parameter file not found: /no/such.yaml",
        ),
        ("- include: {file: nosuch.launch.yaml}", ":2: <include> included launch file not found"),
        ("- include: {file: /etc/hostname}", ":2: <include> only YAML launch files can be included"),
    ],
)
def test_evaluation_errors_name_file_line_and_tag(write, body, message):
    path = write("launch:\n" + body + "\n")
    with pytest.raises(LaunchError, match=f"t.launch.yaml{message}"):
        plan_of(path)


def test_errors_inside_an_included_file_point_at_that_file(write):
    write("launch:\n- let: {name: a, value: b}\n- bogus: {}\n", name="inner.launch.yaml")
    path = write("launch:\n- include: {file: $(dirname)/inner.launch.yaml}\n")
    with pytest.raises(LaunchError, match=r"inner.launch.yaml:3: <bogus> unsupported tag"):
        plan_of(path)


def test_smoke_launch_file_parses_with_defaults():
    share = os.path.join(os.path.dirname(__file__), "..", "..", "launch", "smoke.launch.yaml")
    plan = plan_of(share)
    assert [(p.label, p.namespace) for p in plan.processes] == [("talker", "/smoke"), ("listener", "/smoke")]
    assert params_of(plan.processes[0])[0]["/smoke/talker"]["ros__parameters"]["height"] == 48
    assert [p.label for p in plan_of(share, use_listener="false").processes] == ["talker"]
    plan.cleanup()


def test_append_env_and_log_level(write):
    path = write("""\
        launch:
        - set_env: {name: LR_PATHS, value: /a}
        - append_env: {name: LR_PATHS, value: /b}
        - append_env: {name: LR_PATHS, value: /c, prepend: true, separator: ";"}
        - append_env: {name: LR_NEW, value: x}
        - log: {message: careful, level: WARNING}
        - log: {message: loud, level: SHOUT, if: "$(var bad)"}
        - node: {pkg: lerobot_ros, exec: talker}
        """)
    plan = plan_of(path, env={"PATH": os.environ["PATH"]}, bad="false")
    env = plan.processes[0].env
    assert env["LR_PATHS"] == f"/c;/a{os.pathsep}/b" and env["LR_NEW"] == "x"
    assert plan.messages == [("WARNING", "careful")]
    with pytest.raises(LaunchError, match=r":7: <log> log level must be one of DEBUG, INFO"):
        plan_of(path, bad="true")


def test_a_missing_package_ends_the_launch_as_in_ros2_launch_and_duplicates_are_warned(write):
    """ros2 launch stops everything on a node whose package is missing, so the runner does too (it used to
    skip viewer packages, which hid a launch that real ros2 launch aborts); --check lists them all (tests/e2e/test_launch_check.py)."""
    from lerobot_ros.launch_runner import ament

    if ament.package_prefix("rviz2") is not None:
        pytest.skip("rviz2 is installed here")
    path = write("""\
        launch:
        - node: {pkg: lerobot_ros, exec: talker, name: twin, namespace: sim}
        - node: {pkg: lerobot_ros, exec: listener, name: twin, namespace: /sim}
        - node: {pkg: rviz2, exec: rviz2, name: rviz}
        """)
    with pytest.raises(LaunchError, match=r"t.launch.yaml:4: <node> package 'rviz2' not found in the ament index"):
        plan_of(path)
    plan = evaluate_file(path, collect_missing=True)
    assert [p.label for p in plan.processes] == ["twin", "twin-2"]
    assert [(where.rsplit(":", 1)[1], pkg) for where, pkg, _ in plan.missing] == [("4", "rviz2")]
    assert len(plan.warnings) == 1
    assert "t.launch.yaml:3: there are now at least 2 nodes named /sim/twin" in plan.warnings[0]


def test_show_args_lists_arguments_of_the_file_groups_and_static_includes(write, capsys):
    from lerobot_ros.cli.launch import show_args

    write(
        "launch:\n- arg: {name: b, description: child arg, choice: [{value: x}, {value: y}]}\n"
        "- arg: {name: a, default: z}\n",
        name="child.launch.yaml",
    )
    path = write("""\
        launch:
        - arg: {name: a, default: "$(env HOME)/x", description: top arg}
        - group: [{arg: {name: g, default: "1"}}]
        - include: {file: $(dirname)/child.launch.yaml}
        - include: {file: $(var a)/child.launch.yaml}
        """)
    assert show_args(path) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[1:] == [
        "  'a': top arg",
        "      default: '$(env HOME)/x'",
        "  'g': no description given",
        "      default: '1'",
        "  'b': child arg [from child.launch.yaml]",
        "      (required); choices: x, y",
    ]
