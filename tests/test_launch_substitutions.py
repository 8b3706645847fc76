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


def test_env_and_optenv():
    assert ev("$(env HOME_X)") == "/home/x"
    assert ev("$(env MISSING fallback)") == "fallback"
    assert ev("$(env EMPTY dflt)") == ""
    assert ev("$(optenv MISSING)") == ""
    assert ev("$(optenv MISSING d)") == "d"
    with pytest.raises(S.SubstitutionError, match="environment variable 'MISSING' does not exist"):
        ev("$(env MISSING)")


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
    with pytest.raises(S.SubstitutionError, match="must be true, false, 1 or 0, got 'yes'"):
        ev("$(not yes)")


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


@pytest.mark.parametrize("text, message", [
    ("$(nosuch x)", "unknown substitution '\\$\\(nosuch"),
    ("$(var)", "takes 1 argument"),
    ("$(var a b)", "takes 1 argument"),
    ("$(env)", "takes 1 or 2 argument"),
    ("$(dirname x)", "takes 0 argument"),
    ("$(var x", "expected '\\)'"),
    ("$(var 'x)", "unterminated"),
    ("$(var a(b)", "unexpected"),
    ("$()", "expected a substitution name"),
])
def test_malformed_substitutions_are_rejected_at_parse_time(text, message):
    with pytest.raises(S.SubstitutionError, match=message):
        S.parse(text)
