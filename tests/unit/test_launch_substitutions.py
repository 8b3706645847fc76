"""Substitutions of the YAML launch format: syntax (quotes, nesting, escapes) and every supported name."""

from __future__ import annotations

import os

import pytest

from lerobot_ros.launch_runner import substitutions as S


def ev(text: str, **configs) -> str:
    scope = S.SimpleScope(configs=configs, environ={"HOME_X": "/home/x", "EMPTY": ""}, file="/a/b/c.launch.yaml")
    return S.evaluate(S.parse(text), scope)


def test_plain_text_and_escapes():
    assert ev("hello world") == "hello world"
    assert ev(r"cost \$(var x) $ 5") == "cost $(var x) $ 5"
    assert ev("") == ""
    assert ev("'quoted' \"text\"") == "'quoted' \"text\""


def test_var_and_nesting_and_quotes():
    assert ev("ns/$(var robot)/joint_states", robot="follower") == "ns/follower/joint_states"
    assert ev("$(var $(var which))", which="a", a="A") == "A"
    assert ev("$(equals '$(var a) b' 'x b')", a="x") == "true"
    assert ev('$(equals "two words" "two words")') == "true"
    assert ev("$(var a)$(var b)", a="1", b="2") == "12"


def test_var_unset_is_an_error():
    with pytest.raises(S.SubstitutionError, match="launch configuration 'nope' is not set"):
        ev("$(var nope)")


def test_env_and_no_optenv():
    assert ev("$(env HOME_X)") == "/home/x"
    assert ev("$(env MISSING fallback)") == "fallback"
    assert ev("$(env EMPTY dflt)") == ""
    assert ev("$(env MISSING '')") == ""
    with pytest.raises(S.SubstitutionError, match="environment variable 'MISSING' does not exist"):
        ev("$(env MISSING)")
    with pytest.raises(S.SubstitutionError, match=r"ros2 launch has no \$\(optenv\); write \$\(env NAME ''\)"):
        S.parse("$(optenv MISSING)")


def test_find_pkg_share_and_prefix_use_the_ament_index():
    share = ev("$(find-pkg-share lerobot_ros)")
    assert share.endswith(os.path.join("share", "lerobot_ros"))
    assert os.path.isfile(os.path.join(share, "package.xml"))
    assert ev("$(find-pkg-prefix lerobot_ros)") == os.path.dirname(os.path.dirname(share))
    with pytest.raises(S.SubstitutionError, match="package 'no_such_pkg' not found in the ament index"):
        ev("$(find-pkg-share no_such_pkg)")


def test_eval_safe_subset():
    assert ev("$(eval '1 + 2 * 3')") == "7"
    assert ev("$(eval '$(var w) * 3 // 4')", w="640") == "480"
    assert ev("$(eval 'math.pi > 3 and pi < 4')") == "True"
    assert ev("$(eval \"'a' if $(var x) == 1 else 'b'\")", x="2") == "b"
    assert ev("$(eval 'max(1, 5, 2)')") == "5"
    for bad in ("__import__('os')", "open('/etc/passwd')", "(1).__class__", "[x for x in range(3)]"):
        with pytest.raises(S.SubstitutionError, match=r"\$\(eval"):
            ev(f'$(eval "{bad}")')
    with pytest.raises(S.SubstitutionError, match="ZeroDivisionError"):
        ev("$(eval '1/0')")


def test_boolean_substitutions():
    assert ev("$(not true)") == "false"
    assert ev("$(not 0)") == "true"
    assert ev("$(not False)") == "true"
    assert ev("$(and true 1)") == "true"
    assert ev("$(and true 0)") == "false"
    assert ev("$(or false 0)") == "false"
    assert ev("$(or $(var a) false)", a="TRUE") == "true"
    assert ev("$(any false false true)") == "true"
    assert ev("$(all true true false)") == "false"
    with pytest.raises(S.SubstitutionError, match="must be a boolean .*got 'maybe'"):
        ev("$(not maybe)")


def test_equals_compares_booleans_numbers_and_strings():
    assert ev("$(equals true 1)") == "true"
    assert ev("$(equals 1.0 1)") == "true"
    assert ev("$(equals 0.1 0.10000000001)") == "true"
    assert ev("$(equals abc abd)") == "false"
    assert ev("$(not-equals abc abd)") == "true"


def test_dirname_filename_anon_command():
    assert ev("$(dirname)/x.yaml") == "/a/b/x.yaml"
    assert ev("$(filename)") == "/a/b/c.launch.yaml"
    scope = S.SimpleScope(file="f")
    first = S.evaluate(S.parse("$(anon cam)"), scope)
    assert first.startswith("cam_") and first == S.evaluate(S.parse("$(anon cam)"), scope)
    assert S.evaluate(S.parse("$(anon other)"), scope) != first
    assert ev("$(command 'echo hi there')") == "hi there\n"
    with pytest.raises(S.SubstitutionError, match="exited with status"):
        ev("$(command false)")


@pytest.mark.parametrize(
    "text, message",
    [
        ("$(nosuch x)", "unknown substitution '\\$\\(nosuch"),
        ("$(var)", "takes 1 or 2 argument"),
        ("$(var a b c)", "takes 1 or 2 argument"),
        ("$(if a)", "takes 2 or 3 argument"),
        ("$(env)", "takes 1 or 2 argument"),
        ("$(dirname x)", "takes 0 argument"),
        ("$(var x", "expected '\\)'"),
        ("$(var 'x)", "unterminated"),
        ("$(var a(b)", "unexpected"),
        ("$()", "expected a substitution name"),
    ],
)
def test_malformed_substitutions_are_rejected_at_parse_time(text, message):
    with pytest.raises(S.SubstitutionError, match=message):
        S.parse(text)


# Each case was run through launch 3.7.1's own parse_substitution + perform_substitutions (lark 1.3.1) with
# a=x, empty='', which=a, sp='two words', and gave this value (None: launch raised an error).
REAL_LAUNCH = [
    # an empty quoted argument is launch's empty list: equals/not-equals compare the text '[]'
    ("$(not-equals '' '')", "false"),
    ("$(not-equals '$(var empty)' '')", "true"),  # the old policy condition: true for an empty path
    ("$(not-equals 'x$(var empty)' x)", "false"),  # its fix
    ("$(equals '' [])", "true"),
    ("$(equals '' $(var empty))", "false"),
    ("$(equals $(var empty) '')", "false"),
    ("$(not-equals \"\" '')", "false"),
    ('$(equals "" x)', "false"),
    ("$(equals '' '')", "true"),
    ("$(equals 'x$(var empty)' x)", "true"),
    ("$(not '')", None),
    ("$(and '' true)", None),
    ("$(any true '')", None),
    ("$(env NOPE_X '')", ""),
    ("$(env '' fallback)", "fallback"),
    ("$(var '')", None),
    ("$(if true '' b)", ""),
    ("$(if false a)", ""),
    ("$(eval '')", None),
    ("$(command '')", None),
    # nested quotes: inside a quoted argument, a nested substitution's arguments cannot be quoted
    ("$(equals '$(equals \"a\" a)' false)", "true"),
    ("$(equals \"$(equals 'a' a)\" false)", "true"),
    ("$(equals '$(equals a a)' true)", "true"),
    ('$(equals \'$(equals \\"a\\" "a")\' true)', "true"),
    ("$(equals '$(var a\\'b)' x)", None),
    ("'$(equals \"a b\" x)'", "'false'"),  # quotes are plain text outside a substitution
    ("$(equals \"a b\" 'a b')", "true"),
    ("$(equals '$(var sp)' 'two words')", "true"),
    ("$(equals $(var sp) 'two words')", "true"),
    ("$(equals 'it\\'s' 'it\\'s')", "true"),
    ('$(equals "it\'s" "it\'s")', "true"),
    ("$(equals 'it\\'s' it's)", None),
    ("$(equals 'a'b ab)", None),
    ("$(equals 'a'$(var a) x)", None),
    ("$(equals a$(var a)'b' x)", None),
    # escapes
    ("a\\b", "ab"),
    ("\\$(var a)", "$(var a)"),
    ("trail\\", "trail\\"),
    ("a\\\\b", "a\\b"),
    ("\\\\$(var a)", "\\$(var a)"),  # a '$' right after a backslash never opens a substitution
    ("a\\\nb", "a\\\nb"),
    ("$(equals 'a\\b' ab)", "true"),
    ("$(equals a\\b ab)", "true"),
    ("$(equals 'a\\\\b' 'a\\b')", "false"),
    ("$(equals x\\ y x)", None),  # a backslash does not escape the separating space
    ("$(equals '$(equals a\\ b a\\ b)' true)", None),
    ("$(equals a\\)b a)b)", "falseb)"),
    ("$(equals \\( \\()", "true"),
    ("$(var a\\\\)", None),
    ("$$(var a)", "$x"),
    ("$(equals $ $)", "true"),
    # spacing and arity
    ("$(equals a  b)", None),
    ("$( var a)", None),
    ("$(var a )", None),
    ("$(equals a)", None),
    ("$(equals a(b a)", None),
    ("$(var nope default)", "default"),
    ("$(var empty dflt)", ""),
    ("$(var $(var which))", "x"),
    # boolean substitutions read YAML booleans; '1'/'0' too
    ("$(not yes)", "false"),
    ("$(not on)", "false"),
    ("$(not TRUE)", "false"),
    ("$(not tRuE)", None),
    ("$(not ' 1')", None),
    ("$(if yes a b)", "a"),
    ("$(equals TRUE 1)", "true"),
    ("$(equals 1.0 1)", "true"),
    ("$(optenv X)", None),
]


@pytest.mark.parametrize("text, want", REAL_LAUNCH)
def test_grammar_matches_ros2_launch(text, want):
    scope = S.SimpleScope(
        configs={"a": "x", "empty": "", "which": "a", "sp": "two words"}, environ={"PATH": "/usr/bin"}
    )
    if want is None:
        with pytest.raises(S.SubstitutionError):
            S.evaluate(S.parse(text), scope)
    else:
        assert S.evaluate(S.parse(text), scope) == want


def test_empty_quoted_argument_is_kept_apart_from_an_empty_value():
    (sub,) = S.parse("$(equals '' \"\")")
    assert sub.args == (S.EMPTY_QUOTED, S.EMPTY_QUOTED)
    (sub,) = S.parse("$(equals '$(var e)' x)")
    assert sub.args[0] == (S.Sub("var", ((S.Text("e"),),)),)
    assert S.source(S.parse("$(not-equals '$(var p)' '')")) == "$(not-equals $(var p) '')"


def test_grammar_notes_flag_quotes_that_are_plain_characters():
    assert S.grammar_notes("$(var a)") == []
    assert S.grammar_notes("$(equals 'a b' x)") == []
    (note,) = S.grammar_notes("$(equals '$(equals \"a\" a)' false)")
    assert "is a plain character" in note
    assert S.grammar_notes("$(equals '$(var a\\'b)' x)") == []  # escaped: meant


def test_find_exec_file_content_exec_in_pkg(tmp_path):
    f = tmp_path / "c.txt"
    f.write_text("hello")
    assert ev(f"$(file-content {f})") == "hello"
    assert os.path.basename(ev("$(exec-in-pkg talker lerobot_ros)")) == "talker"
    with pytest.raises(S.SubstitutionError, match="executable 'nope' not found"):
        ev("$(exec-in-pkg nope lerobot_ros)")
    with pytest.raises(S.SubstitutionError, match="not found on the PATH"):
        ev("$(find-exec no_such_exe_x)")
