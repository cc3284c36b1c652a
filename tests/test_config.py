"""packscope.core.repo.config against git config: syntax, values, includes, errors."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from packscope.core.errors import ConfigError
from packscope.core.repo.config import MAX_INCLUDE_DEPTH, Config, parse_bool, parse_int
from tests.repos import git_env


def git_list(path: Path, includes: bool = True):
    """('ok', bytes of git config --list) or ('error', line number)."""
    args = ["git", "config", "-f", str(path), "--list"]
    if includes:
        args.insert(4, "--includes")
    p = subprocess.run(args, capture_output=True, env=git_env(), cwd=path.parent)
    if p.returncode:
        m = re.search(rb"bad config line (\d+)", p.stderr)
        return ("error", int(m.group(1)) if m else None)
    return ("ok", p.stdout)


def our_list(path: Path, includes: bool = True):
    try:
        cfg = Config.from_file(path, includes=includes)
    except ConfigError as e:
        return ("error", getattr(e, "line", None))
    out = b""
    for e in cfg:
        text = e.name if e.value is None else f"{e.name}={e.value}"
        out += text.encode("utf-8", "surrogateescape") + b"\n"
    return ("ok", out)


# Each case is config text; git is the judge of what it means.
SYNTAX_CASES = [
    b"[core]\n\tbare = false\n",
    b"[a]\n\tkey\n",  # no '=': boolean true, no value
    b"[a]\n\tkey =\n",  # empty value
    b"[a] k = v\n",  # a key on the header's line
    b"[A]\nKey=V\n[a]\nkey=w\n",  # sections and keys are case-insensitive
    b'[remote "Origin"]\n\turl = x\n',  # subsections are case-sensitive
    b"[a.B.c]\nk=v\n",  # legacy [section.subsection]: lower-cased
    b'[a.b "C"]\nk=v\n',
    b'[a "x\\\\y\\"z\\tq"]\nk=v\n',  # subsection escapes: \\ \" and a dropped backslash
    b'[a  "x"]\nk=v\n',
    b'[a]\nk = "a\\tb"  c\t\td  # comment\n',  # quotes, inner whitespace, comment
    b"[a]\nk = a\\\n  b\n",  # continuation line
    b'[a]\nk = "a ; b" ; c\n',
    b'[a]\nk = x\\ny\\bz\\\\w\\"\n',  # escapes \n \b \\ \"
    b'[a]\nk =v"  "w\n',
    b'[a]\nk=""x  \n',
    b"; comment\n# comment\n[a]\n  ; indented comment\nk=v # trailing\n",
    b"\xef\xbb\xbf[a]\nk = v\n",  # BOM
    b"[a]\r\nk = v\r\n",  # CRLF
    b"[a]\nk = a\rb\n",  # a lone CR is whitespace
    b"[a]\nk = v\\",  # backslash at end of file
    b"[a]\nk",  # bare key at end of file
    b"[a]\nk = 1\nk = 2\n[b]\nk = 3\n[a]\nk = 4\n",  # multi-valued, sections reopened
    b"key = v\n",  # a key before any section
    b"[a]\nk-1 = v\n",
    b"[.a]\nk=v\n",
    b"[a.]\nk=v\n",
    b"[a]\nk=\xff\xfe\n",  # not UTF-8: kept byte for byte
    b"[a]\r\n\r\nk = \\\r\nb\n",
    # errors, with git's line numbers
    b"[a]\n\tkey # c\n",
    b'[a "x" ]\nk=v\n',
    b"[a]\nk = \\q\n",
    b'[a]\nk = "abc\n',
    b"[a]\n1k = v\n",
    b"[a]\nk_1 = v\n",
    b"[a_b]\nk = v\n",
    b"[]\nk=v\n",
    b'[a "x"\nk=v\n',
    b'[a "x\ny"]\nk=v\n',
    b"[a]\n\n\nk = a\\\nb\\\nc\\q\n",
    b"[a",
    b'[a "b',
    b'[a "b\\',
    b'[a]\nk = "a',
    b'[a]\nk = "\\',
    b"[a]\nk = a\r\n  b\r",
    b'[a \n "x"]\nk=v',
    b"[a]\nk=v\n[b\n",
    b"[a]\nk=v\n\n[\n",
    b"[a]\nk=v\n\n\n\n!\n",
    b'[a]\nk=v\n[b "c"]x=1\n\n[d]\n\n\n x"',
]


@pytest.mark.parametrize("text", SYNTAX_CASES, ids=lambda t: repr(t)[2:40])
def test_parses_every_syntax_feature_as_git_does(tmp_path, text):
    path = tmp_path / "config"
    path.write_bytes(text)
    assert our_list(path) == git_list(path)


_pieces = st.sampled_from(
    [
        "[a]",
        "[B]",
        '[c "Sub"]',
        '[c "s\\"q"]',
        "[d.E]",
        "[",
        "]",
        '"',
        "\\",
        "\\\n",
        "\\t",
        "\\q",
        "k",
        "Key",
        "k-2",
        "x_y",
        "=",
        " = ",
        " ",
        "\t",
        "\n",
        "\r\n",
        "#",
        ";",
        "v",
        "val ue",
        "1k",
        "\xe9",
    ]
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(_pieces, max_size=24))
def test_agrees_with_git_on_generated_text(tmp_path, parts):
    path = tmp_path / "fuzz-config"
    path.write_bytes("".join(parts).encode())
    assert our_list(path, includes=False) == git_list(path, includes=False)


# --- queries -------------------------------------------------------------------


@pytest.fixture
def cfg(tmp_path):
    p = tmp_path / "config"
    p.write_text(
        "[core]\n\tBare = true\n\tnum = 0x10\n"
        '[remote "origin"]\n\turl = one\n\turl = two\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n'
        '[remote "Origin"]\n\turl = upper\n'
        "[flags]\n\tbare\n\tempty =\n\tyes = YES\n\toff = off\n\ttwo = 2\n\tbad = maybe\n"
        "[sizes]\n\tk = 1k\n\tm = 2M\n\tg = 1g\n\tneg = -3\n\toct = 010\n\tbad = 1x\n\thuge = 9999999999g\n"
    )
    return Config.from_file(p)


def test_last_value_wins_and_get_all_keeps_file_order(cfg):
    assert cfg.get("remote", "url", "origin") == "two"
    assert cfg.get_all("remote", "URL", "origin") == ["one", "two"]


def test_keys_and_sections_are_case_insensitive_subsections_are_not(cfg):
    assert cfg.get("CORE", "bare") == "true"
    assert cfg.get("remote", "url", "Origin") == "upper"
    assert cfg.get("remote", "url", "ORIGIN") is None


def test_absent_keys_are_none(cfg):
    assert cfg.get("core", "nope") is None
    assert cfg.get_bool("core", "nope") is None
    assert cfg.get_bool("core", "nope", default=False) is False
    assert cfg.get_int("core", "nope", default=7) == 7


def test_bare_key_reads_as_empty_string_but_true_as_a_boolean(cfg):
    assert cfg.get("flags", "bare") == ""
    assert cfg.entry("flags", "bare").value is None
    assert cfg.get_bool("flags", "bare") is True
    assert cfg.get_bool("flags", "empty") is False


def test_subsections_lists_names_in_order(cfg):
    assert cfg.subsections("remote") == ["origin", "Origin"]


@pytest.mark.parametrize("key", ["bare", "empty", "yes", "off", "two"])
def test_booleans_match_git(cfg, key):
    out = subprocess.run(
        ["git", "config", "-f", cfg.files[0], "--bool", f"flags.{key}"], capture_output=True, env=git_env(), text=True
    ).stdout.strip()
    assert cfg.get_bool("flags", key) is (out == "true")


@pytest.mark.parametrize("key", ["k", "m", "g", "neg", "oct"])
def test_integers_match_git(cfg, key):
    out = subprocess.run(
        ["git", "config", "-f", cfg.files[0], "--int", f"sizes.{key}"], capture_output=True, env=git_env(), text=True
    ).stdout.strip()
    assert cfg.get_int("sizes", key) == int(out)
    assert cfg.get_int("core", "num") == 16


def test_bad_boolean_and_integer_values_raise_config_error_naming_the_line(cfg):
    with pytest.raises(ConfigError) as e:
        cfg.get_bool("flags", "bad")
    assert "flags.bad" in e.value.message and "line 16" in e.value.message
    assert e.value.path == cfg.files[0]
    with pytest.raises(ConfigError, match="invalid unit"):
        cfg.get_int("sizes", "bad")
    with pytest.raises(ConfigError, match="out of range"):
        cfg.get_int("sizes", "huge")


def test_value_parsers_follow_gits_rules():
    assert parse_bool(None) and parse_bool("On") and parse_bool("1") and parse_bool("-1")
    assert not parse_bool("") and not parse_bool("No") and not parse_bool("0")
    assert parse_int(" 42") == 42 and parse_int("0X1f") == 31 and parse_int("+2k") == 2048
    for bad in ("", "k", "1 k", "1kb", "0x"):
        with pytest.raises(ConfigError):
            parse_int(bad)


# --- errors ------------------------------------------------------------------------


def test_syntax_error_carries_path_line_byte_offset_and_remedy(tmp_path):
    p = tmp_path / "config"
    p.write_bytes(b"[a]\n\tok = 1\n\tbad key\n")
    with pytest.raises(ConfigError) as e:
        Config.from_file(p)
    err = e.value
    assert err.line == 3 and "line 3" in err.message
    assert err.path == str(p)
    assert err.offset == len(b"[a]\n\tok = 1\n")
    assert "line 3" in err.remedy
    assert err.kind == "bad-config"


def test_missing_file_is_an_error_unless_missing_ok(tmp_path):
    with pytest.raises(ConfigError, match="not found"):
        Config.from_file(tmp_path / "nope")
    assert len(Config.from_file(tmp_path / "nope", missing_ok=True)) == 0


# --- includes ------------------------------------------------------------------------


def test_include_is_relative_to_the_including_file_and_expands_in_place(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "config").write_text("[a]\n\tk = before\n[include]\n\tpath = ../shared\n[a]\n\tk2 = after\n")
    (tmp_path / "shared").write_text("[a]\n\tk = shared\n\tk2 = shared\n[b]\n\tx = 1\n")
    cfg = Config.from_file(tmp_path / "sub" / "config")
    assert cfg.get("a", "k") == "shared"  # the include came later than "before"
    assert cfg.get("a", "k2") == "after"  # and earlier than "after"
    assert cfg.get_all("a", "k") == ["before", "shared"]
    assert our_list(tmp_path / "sub" / "config") == git_list(tmp_path / "sub" / "config")
    assert str(tmp_path / "shared") in cfg.files


def test_include_expands_tilde_to_home(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / "inc").write_text("[t]\n\tv = home\n")
    (tmp_path / "config").write_text("[include]\n\tpath = ~/inc\n")
    assert Config.from_file(tmp_path / "config").get("t", "v") == "home"


def test_missing_include_is_skipped_like_git(tmp_path):
    p = tmp_path / "config"
    p.write_text("[include]\n\tpath = nowhere\n[a]\n\tk = 1\n")
    assert Config.from_file(p).get("a", "k") == "1"
    assert our_list(p) == git_list(p)


@pytest.mark.parametrize("target", ["", "sub"])
def test_include_of_a_directory_is_an_error_at_its_line_like_git(tmp_path, target):
    (tmp_path / "sub").mkdir()
    p = tmp_path / "config"
    p.write_text(f"[a]\n\tk = 1\n[include]\n\tpath = {target}\n")
    with pytest.raises(ConfigError, match="directory") as e:
        Config.from_file(p)
    assert e.value.line == 4
    assert our_list(p) == git_list(p) == ("error", 4)


def test_include_without_a_value_is_an_error_like_git(tmp_path):
    p = tmp_path / "config"
    p.write_text("[include]\n\tpath\n")
    with pytest.raises(ConfigError, match="missing value"):
        Config.from_file(p)
    assert git_list(p)[0] == "error"


def test_include_loop_raises_config_error_naming_the_chain(tmp_path):
    (tmp_path / "a").write_text("[x]\n\tk = a\n[include]\n\tpath = b\n")
    (tmp_path / "b").write_text("[include]\n\tpath = a\n")
    with pytest.raises(ConfigError) as e:
        Config.from_file(tmp_path / "a")
    assert "include loop" in e.value.message
    assert str(tmp_path / "a") in e.value.message and str(tmp_path / "b") in e.value.message
    assert git_list(tmp_path / "a")[0] == "error"  # git dies too (at its depth limit)


def test_self_include_is_a_loop(tmp_path):
    (tmp_path / "a").write_text("[include]\n\tpath = a\n")
    with pytest.raises(ConfigError, match="include loop"):
        Config.from_file(tmp_path / "a")


def test_include_depth_is_bounded_as_in_git(tmp_path):
    def chain(n):
        d = tmp_path / f"chain{n}"
        d.mkdir()
        for i in range(n):
            (d / f"f{i}").write_text(f"[include]\n\tpath = f{i + 1}\n")
        (d / f"f{n}").write_text("[end]\n\tok = yes\n")
        return d / "f0"

    assert Config.from_file(chain(MAX_INCLUDE_DEPTH)).get("end", "ok") == "yes"
    assert git_list(chain(MAX_INCLUDE_DEPTH + 1))[0] == "error"
    with pytest.raises(ConfigError, match="maximum include depth"):
        Config.from_file(tmp_path / "chain11" / "f0")


def test_include_if_is_ignored_but_recorded(tmp_path):
    (tmp_path / "cond").write_text("[a]\n\tk = cond\n")
    p = tmp_path / "config"
    p.write_text('[a]\n\tk = plain\n[includeIf "gitdir:/"]\n\tpath = cond\n')
    cfg = Config.from_file(p)
    assert cfg.get("a", "k") == "plain"
    (ignored,) = cfg.ignored_includes
    assert ignored.condition == "gitdir:/" and ignored.target == "cond" and ignored.line == 4


def test_includes_can_be_turned_off(tmp_path):
    (tmp_path / "inc").write_text("[a]\n\tk = inc\n")
    p = tmp_path / "config"
    p.write_text("[include]\n\tpath = inc\n")
    assert Config.from_file(p, includes=False).get("a", "k") is None


def test_merged_configs_let_the_later_file_win(tmp_path):
    (tmp_path / "one").write_text("[a]\n\tk = 1\n\tonly = one\n")
    (tmp_path / "two").write_text("[a]\n\tk = 2\n")
    cfg = Config.from_files([tmp_path / "one", tmp_path / "two"])
    assert cfg.get("a", "k") == "2" and cfg.get("a", "only") == "one"
    assert Config.from_file(tmp_path / "one").merged(Config.from_file(tmp_path / "two")).get("a", "k") == "2"


def test_from_bytes_parses_text_in_memory():
    cfg = Config.from_bytes(b'[x "y"]\n\tz = 1\n')
    assert cfg.get_int("x", "z", "y") == 1
    assert os.fspath(cfg.entry("x", "z", "y").name) == "x.y.z"
