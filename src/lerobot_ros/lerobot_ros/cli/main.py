"""`lerobot-ros <verb> ...`: one entry point, one module per verb (imported lazily: torch is slow to load).

Each verb module has `add_arguments(parser)` and `run(args) -> int`: it parses, builds a config, makes one
library call and prints what came of it. Only here are failures turned into exit codes, the same for every
verb (`EXIT_CODES`): an expected failure (`UserError` and the OS / file-format errors of a user's files) is
one line and 1, a bad flag or value 2, Ctrl-C 130. Anything else is a bug and keeps its traceback.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from lerobot_ros.cli.renamed import renamed_flag_hint

# verb -> (module, one-line help).
VERBS = {
    "demo": ("lerobot_ros.cli.demo", "run the main job on an embedded default (simulation, no hardware)"),
    "smoke": ("lerobot_ros.cli.smoke", "two nodes in two processes exchange joint states and camera images"),
    "launch": ("lerobot_ros.cli.launch", "run a ROS 2 YAML launch file without ros2 launch (pip-only installs)"),
    "record": ("lerobot_ros.cli.record", "record episodes of a contract's topics into one rosbag2 (MCAP) per episode"),
    "repair": ("lerobot_ros.cli.repair", "make the bag of a killed recorder readable (recover complete MCAP chunks)"),
    "virtual-arm": (
        "lerobot_ros.cli.virtual_arm",
        "emulated leader/follower arms (Feetech/Dynamixel) on ptys, calibrated",
    ),
    "virtual-base": (
        "lerobot_ros.cli.virtual_base",
        "LeKiwi's three wheel servos (Feetech, velocity mode) emulated on a pty",
    ),
    "convert": ("lerobot_ros.cli.convert", "convert rosbag2 recordings into a LeRobotDataset v3 per a topic contract"),
    "merge": (
        "lerobot_ros.cli.merge",
        "join LeRobotDatasets (e.g. the shards of a sharded convert) into one, QA reports merged",
    ),
    "export": ("lerobot_ros.cli.export", "export a LeRobotDataset to a rosbag2 (MCAP) on a contract's topics"),
    "eval": (
        "lerobot_ros.cli.eval",
        "evaluate a policy or scripted expert through sim bridges, scored like lerobot-eval",
    ),
    "certs": ("lerobot_ros.cli.certs", "certificates of the secure two-host link: a CA, host certificates, revocation"),
    "view": (
        "lerobot_ros.cli.view",
        "see the robot in rerun: live on a contract's topics, or replay a bag / dataset episode",
    ),
}

#: verbs that run on the robot side (or emulate it) and never need torch: LeRobot's import of it is kept out
TORCHLESS_VERBS = ("virtual-arm", "virtual-base", "record")

EXIT_OK, EXIT_FAILURE, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130
#: the exit status of every verb, and what it means (the documentation prints this table)
EXIT_CODES = {
    EXIT_OK: "done",
    EXIT_FAILURE: "an expected failure (a bad path, file, topic, policy, a missing extra or a run that did not "
    "succeed); one line on stderr says what is wrong and what to do",
    EXIT_USAGE: "usage: an unknown verb or flag, or a flag value the command refuses",
    EXIT_INTERRUPTED: "interrupted (Ctrl-C); what was finished before is kept",
}


class _Parser(argparse.ArgumentParser):
    """argparse without abbreviations (`--out` must not pass for `--output_dir`: one name per concept), with a
    hint for a flag that was renamed (`--out` is now `--output_dir` ...)."""

    verb: str | None = None  # the verb on the command line (the top-level parser reports its errors)
    argv: list[str] = []  # the command line, for the renamed-flag hint

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def error(self, message: str):
        hint = renamed_flag_hint(self.verb or self.prog.split()[-1], message, _Parser.argv)
        super().error(f"{message}{'; ' + hint if hint else ''}")


def build_parser(selected: str | None = None, *, every_verb: bool = True) -> argparse.ArgumentParser:
    """All verbs with their options; with `selected`, only that verb's module is imported (the others may pull in
    torch or need an extra that is not installed); `every_verb=False` with no `selected` imports none (the
    top-level `--help`)."""
    parser = _Parser(prog="lerobot-ros", description="LeRobot on ROS 2.")
    parser.verb = selected
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    sub = parser.add_subparsers(dest="verb", metavar="VERB", parser_class=_Parser)
    for verb, (module_name, help_text) in VERBS.items():
        if verb != selected and (selected is not None or not every_verb):
            sub.add_parser(verb, help=help_text)
            continue
        module = _import_verb(verb, module_name)
        p = sub.add_parser(
            verb,
            help=help_text,
            description=(module.__doc__ or help_text).strip(),
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        module.add_arguments(p)
        p.set_defaults(_module=module)
    return parser


def _import_verb(verb: str, module_name: str):
    from lerobot_ros.conventions.extras import MissingExtraError, missing_extra_message

    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        message = missing_extra_message(exc, verb)
        if message is None:
            raise
        raise MissingExtraError(message) from exc


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("lerobot_ros")
    except PackageNotFoundError:
        return "unknown"


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    verb = next((a for a in argv if not a.startswith("-")), None)
    from lerobot_ros.conventions.extras import MissingExtraError

    try:
        parser = build_parser(verb if verb in VERBS else None, every_verb=False)
    except MissingExtraError as exc:
        print(f"lerobot-ros {verb}: {exc}", file=sys.stderr)
        return EXIT_FAILURE
    _Parser.argv = list(argv)
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, --version (0) and usage errors (2)
        return int(exc.code or 0)
    if not getattr(args, "verb", None):
        parser.print_help()
        return EXIT_USAGE
    return run_verb(args)


def run_verb(args: argparse.Namespace) -> int:
    """Run the parsed verb; the one place where exceptions become exit codes."""
    from lerobot_ros.configs import ParameterError

    try:
        return int(args._module.run(args) or 0)
    except KeyboardInterrupt:
        print(f"lerobot-ros {args.verb}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except ParameterError as exc:  # a flag value the config refuses: usage
        print(f"lerobot-ros {args.verb}: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except EXPECTED_FAILURES as exc:  # a user's file, folder or setting, not a bug: one line, no traceback
        print(f"lerobot-ros {args.verb}: {describe_failure(exc)}", file=sys.stderr)
        return EXIT_FAILURE
    except ModuleNotFoundError as exc:  # a lazily imported package of an extra that is not installed
        from lerobot_ros.conventions.extras import missing_extra_message

        message = missing_extra_message(exc, args.verb)
        if message is None:
            raise
        print(f"lerobot-ros {args.verb}: {message}", file=sys.stderr)
        return EXIT_FAILURE


def _expected_failures() -> tuple[type[BaseException], ...]:
    import json

    import yaml

    from lerobot_ros.conventions.errors import UserError

    return (UserError, OSError, json.JSONDecodeError, yaml.YAMLError, UnicodeDecodeError)


EXPECTED_FAILURES = _expected_failures()


def describe_failure(exc: BaseException) -> str:
    """One line for an expected failure: what, which file, what to do."""
    import json

    import yaml

    from lerobot_ros.conventions.errors import UserError

    if isinstance(exc, UserError):
        return str(exc)
    if isinstance(exc, OSError):
        where = " -> ".join(str(f) for f in (exc.filename, exc.filename2) if f is not None)
        what = (exc.strerror or str(exc)).lower()
        hint = {
            "FileNotFoundError": "check the path",
            "PermissionError": "choose a folder you can write to, or fix its permissions",
            "IsADirectoryError": "pass a file, not a folder",
            "NotADirectoryError": "a part of the path is a file, not a folder",
        }.get(type(exc).__name__, "check the path and the disk")
        return f"{where + ': ' if where else ''}{what}; {hint}"
    if isinstance(exc, json.JSONDecodeError):
        return f"malformed JSON ({exc.msg} at line {exc.lineno} column {exc.colno}); fix or replace the file"
    if isinstance(exc, yaml.YAMLError):
        mark = getattr(exc, "problem_mark", None)
        at = f" in {mark.name} at line {mark.line + 1} column {mark.column + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        return f"malformed YAML{at}: {problem}; fix the file"
    if isinstance(exc, UnicodeDecodeError):
        return f"a file is not UTF-8 text ({exc.reason} at byte {exc.start}); pass the right file"
    return f"{type(exc).__name__}: {exc}"


def entry() -> None:
    """The `lerobot-ros` executable: a robot-side verb keeps torch out of its process first (main() itself never
    does, so callers in a process that needs torch, such as tests, are not touched)."""
    verb = next((a for a in sys.argv[1:] if not a.startswith("-")), None)
    if verb in TORCHLESS_VERBS:
        from lerobot_ros.ros.torchless import keep_torch_out

        keep_torch_out()
    sys.exit(main())


if __name__ == "__main__":
    entry()
