"""The README's two set-up commands stay true, and CI runs the second one."""

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def readme_commands():
    text = (ROOT / "README.md").read_text()
    blocks = text.split("```sh\n")[1:3]
    return [b.split("\n```", 1)[0].strip() for b in blocks]


def test_readme_opens_with_an_install_and_a_test_command():
    install, test = readme_commands()
    assert "pip install ." in install and "packscope demo" in install
    assert "pip install '.[test]'" in test and "pytest" in test


def test_ci_runs_the_readme_test_command_verbatim():
    _, test = readme_commands()
    assert test in (ROOT / ".ci" / "run").read_text().splitlines()
