"""Run a ROS 2 YAML launch file without `ros2 launch` (pip-only installs): each node its own process.

  lerobot-ros launch FILE [name:=value ...]          a path, or a name in share/lerobot_ros/launch
  lerobot-ros launch PKG FILE [name:=value ...]      FILE in share/PKG/launch (found via the ament index)
  lerobot-ros launch FILE --show-args                the file's arguments with defaults and descriptions
  lerobot-ros launch FILE --print                    the commands that would run, without running them
  lerobot-ros launch FILE [name:=value ...] --check  what would differ or fail under ros2 launch (exit 1 if any)
  lerobot-ros launch --installed PKG                 prints true or false (for `if:` conditions of launch files)

The same files run under `ros2 launch` unchanged; the supported subset is listed in launch/README.md.
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys

DEFAULT_PACKAGE = "lerobot_ros"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.add_argument(
        "target",
        nargs="*",
        metavar="FILE|PKG FILE [name:=value ...]",
        help="launch file (path or name) or package and file, then launch arguments name:=value",
    )
    parser.add_argument(
        "--print", dest="print_only", action="store_true", help="print the processes that would start and exit"
    )
    parser.add_argument(
        "--show-args",
        "-s",
        action="store_true",
        help="list the launch file's arguments (with defaults and descriptions) and exit",
    )
    parser.add_argument(
        "--check",
        action="store_true",
        help="report constructs that differ under ros2 launch, missing packages and processes that "
        "would exit at once; exit status 1 when there is any finding",
    )
    parser.add_argument(
        "--installed",
        metavar="PKG",
        help="print true if PKG is in the ament index, else false, and exit (a condition that "
        "ros2 launch and this runner evaluate alike: $(command '... --installed PKG'))",
    )


def split_target(items: list[str]) -> tuple[list[str], dict[str, str]]:
    positional, launch_args = [], {}
    for item in items:
        if ":=" in item:
            name, value = item.split(":=", 1)
            if not name:
                raise ValueError(f"launch argument '{item}' has no name (use name:=value)")
            launch_args[name] = value
        else:
            if launch_args:
                raise ValueError(f"'{item}': launch arguments (name:=value) must come after the file")
            positional.append(item)
    if not 1 <= len(positional) <= 2:
        raise ValueError(
            "expected FILE or PKG FILE before the name:=value arguments, got " + (" ".join(positional) or "nothing")
        )
    return positional, launch_args


def resolve_file(positional: list[str]) -> str:
    """A path as given, else a file in share/<pkg>/launch found through the ament index."""
    from lerobot_ros.launch_runner import ament

    if len(positional) == 1 and os.path.isfile(positional[0]):
        return os.path.abspath(positional[0])
    package, name = (DEFAULT_PACKAGE, positional[0]) if len(positional) == 1 else positional
    prefix = ament.package_prefix(package)
    if prefix is None:
        raise FileNotFoundError(
            f"package '{package}' not found in the ament index (searched {', '.join(ament.prefixes())})"
        )
    folder = os.path.join(prefix, "share", package, "launch")
    for candidate in (name, name + ".launch.yaml", name + ".yaml"):
        path = os.path.join(folder, candidate)
        if os.path.isfile(path):
            return path
    available = sorted(f for f in os.listdir(folder) if f.endswith((".yaml", ".yml"))) if os.path.isdir(folder) else []
    raise FileNotFoundError(
        f"launch file '{name}' not found (not a path, not in {folder}"
        + (f"; available: {', '.join(available)})" if available else ")")
    )


def show_args(path: str) -> int:
    """List the `arg`s of the file, its groups and the includes whose path needs no launch argument."""
    from lerobot_ros.launch_runner import entities as E
    from lerobot_ros.launch_runner import substitutions as S
    from lerobot_ros.launch_runner.parser import parse_file

    def source(parts) -> str:
        return "".join(
            p.text if isinstance(p, S.Text) else "$(" + " ".join([p.name, *(source(a) for a in p.args)]) + ")"
            for p in parts
        )

    def walk(items, seen):
        for ent in items:
            if isinstance(ent, E.Arg):
                yield ent
            elif isinstance(ent, E.Group):
                yield from walk(ent.children, seen)
            elif isinstance(ent, E.Include):
                try:
                    included = os.path.abspath(S.evaluate(ent.file_, S.SimpleScope(configs={}, file=ent.file)))
                except S.SubstitutionError:
                    continue  # the path depends on a launch argument: known only when run
                if included not in seen and os.path.isfile(included) and included.endswith((".yaml", ".yml")):
                    seen.add(included)
                    yield from walk(parse_file(included).entities, seen)

    args, names = [], set()
    for a in walk(parse_file(path).entities, {os.path.abspath(path)}):
        if a.name not in names:
            names.add(a.name)
            args.append(a)
    print(f"Arguments of {path} (pass as name:=value):")
    if not args:
        print("  (none)")
    for a in args:
        default = "(required)" if a.default is None else f"default: '{source(a.default)}'"
        origin = "" if os.path.abspath(a.file) == os.path.abspath(path) else f" [from {os.path.basename(a.file)}]"
        print(f"  '{a.name}': {a.description or 'no description given'}{origin}")
        print(f"      {default}" + (f"; choices: {', '.join(a.choices)}" if a.choices else ""))
    return 0


def run(args: argparse.Namespace) -> int:
    from lerobot_ros.configs import ParameterError
    from lerobot_ros.launch_runner import evaluate_file, run_processes

    if args.installed is not None:
        from lerobot_ros.launch_runner import ament

        print("true" if ament.package_prefix(args.installed) else "false")
        return 0
    try:
        positional, launch_args = split_target(args.target)
        path = resolve_file(positional)
        if args.show_args:
            return show_args(path)
        if args.check:
            from lerobot_ros.launch_runner.check import check_file, format_report

            report = check_file(path, launch_args)
            print("\n".join(format_report(report)))
            return 1 if report.findings else 0
        plan = evaluate_file(path, launch_args)
    except ValueError as exc:  # bad command line
        raise ParameterError(str(exc)) from None
    declared = {d.name for d in plan.declared}
    for name in launch_args:
        if name not in declared:
            print(
                f"warning: launch argument '{name}' is not declared by {os.path.basename(path)} or its includes",
                file=sys.stderr,
            )
    for warning in plan.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    try:
        for level, message in plan.messages:
            print(f"[launch] {message}" if level == "INFO" else f"[launch] {level}: {message}")
        if args.print_only:
            for p in plan.processes:
                print(f"# {p.label} ({p.source})")
                print(shlex.join(p.cmd))
                for path in (a for a in p.cmd if a in plan.temp_files):
                    with open(path, encoding="utf-8") as f:
                        print("\n".join(f"#   {line}" for line in [f"{path}:", *f.read().splitlines()]))
            return 0
        if not plan.processes:
            print(f"[launch] {os.path.basename(path)} starts no process")
            return 0
        return run_processes(plan.processes)
    finally:
        plan.cleanup()
