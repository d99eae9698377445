"""Every command the documentation shows runs, and prints what the documentation says it prints.

The commands are read from the fenced blocks of README.md and of the pages of docs/ (the guide,
getting started, contributing): in a block with a ``$ `` prompt, each prompted line (with its
``\\`` continuation lines) is a command and the lines after it, up to the next prompt, are what
it prints; in a block without prompts, each line that starts with a program (``make``,
``longitudinal``, ``python``, ``.venv/bin/...``) is a command. Python blocks are not commands,
but the two that write a file a command reads (``codes.csv``, ``pred.csv``) run, as written on
their page, before that command.

Each command is either in :data:`RUN`, run here in the order a reader meets it, all in one
working folder shared by the module (``tests/`` of the repository is linked into it, so the
paths the guide gives into ``tests/data`` hold), or in :data:`NOT_RUN` with the reason it
cannot run in a test. A command the documentation shows that is in neither fails the test, and
so does an entry of either that the documentation no longer shows.

``longitudinal ...`` (and ``.venv/bin/longitudinal ...``, the same entry point in the
environment ``make`` builds) runs in this process: the command line's ``main`` with the
command's arguments. The inputs the guide names without shipping them are written here
(:data:`INPUTS`). The reports' figures are drawn as drafts (each figure drawn and its SVG
written, the PNG at 40 dpi, no PDF: tests/conftest.py), since nothing here reads a pixel; the
commands themselves run with the options the documentation gives them. Where the
documentation shows what a command prints, each line shown must be in what it printed
(spaces collapsed, so that a line the page wraps is matched piece by piece).
"""

from __future__ import annotations

import re
import shlex
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import CommandRun, draft_figures, run_command

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"

#: The first word of a command in a block without prompts.
PROGRAMS = ("make", "longitudinal", "python", "python3", "pip", "uv", "jupyter", "pytest")
#: Fenced blocks that hold commands (the others hold Python, TOML, or directives).
SHELL_BLOCKS = ("", "console", "shell", "sh", "bash", "text")

#: The commands run here, in the order they run: a command reads what an earlier one wrote.
RUN = (
    "longitudinal instruments",
    "longitudinal simulate --out study --seed 2024",
    "longitudinal score study/surveys/pre.csv --instrument bfi44 tas4 --id-col participant_id"
    " --out pre_scores.csv --reliability pre_rel.csv",
    "head -3 pre_scores.csv",
    "longitudinal score bad.csv --instrument tas4 --out s.csv",
    'longitudinal fit sleepstudy.csv --formula "Reaction ~ Days + (Days | Subject)" --out fit.json',
    "longitudinal fit tests/data/ordinal_wine.csv --engine clmm"
    ' --formula "rating ~ temp + contact + (1 | judge)" --out fit.json',
    "longitudinal reliability tests/data/raw/mood3_long.csv --instrument tests/data/raw/mood3.toml"
    " --id-col pid --wave-col wave --out mood-reliability",
    "longitudinal agreement codes.csv --unit-col unit --rater-col coder --value-col code"
    " --level ordinal --out agreement.csv",
    "longitudinal reliability tests/data/raw/mood3_long.csv --instrument tests/data/raw/mood3.toml"
    " --id-col pid --wave-col wave --invariance --out reliability",
    "longitudinal reliability tests/data/psychTools_sai_flat_all.csv --instrument"
    " tests/data/raw/sai4.toml --id-col id --wave-col time --invariance --estimator WLSMV"
    " --out sai-reliability",
    "longitudinal evaluate study --out study/evaluate --seeds 5",
    "longitudinal splits study --seeds 5 --kfold 5 --out splits.csv",
    "longitudinal evaluate study --seeds 5 --kfold 5 --predictions pred.csv --out study/evaluate"
    " --overwrite",
    "longitudinal report study --out study-report",
    "longitudinal demo --out demo-report",
    ".venv/bin/longitudinal report my-study --out my-report",
)

#: Exit codes other than 0 that a command shows on purpose.
EXIT = {"longitudinal score bad.csv --instrument tas4 --out s.csv": 2}

_POWER = (
    "5,000 simulated studies, each refitted (about a minute of CPU on two processes); "
    "tests/longitudinal/cli/test_cli_power.py runs the command on fewer simulations"
)

#: The commands not run here, each with the reason.
NOT_RUN = {
    "make demo": (
        "builds .venv from the lock, over the network; its recipe is the demo command of RUN "
        "with --overwrite (test_make_demo_runs_the_demo_command)"
    ),
    "make test": "runs the whole suite, this test included",
    "make lint": "builds .venv from the lock, over the network, to run ruff over the tree",
    "make docs": "builds this site, as tests/test_docs.py does before it checks the site",
    "longitudinal power --pilot demo-report/study --effect bfi44_agreeableness_z=0.2"
    " --participants 20,40,60,80,100 --seed 1 --scheduler processes:2 --out power-demo": _POWER,
    "longitudinal power --pilot demo-report/study --engine clmm"
    " --effect bfi44_agreeableness_z=0.36 --participants 40,80,120 --sims 400 --seed 1"
    " --scheduler processes:2 --out power-ordinal": (
        "1,200 simulated studies, each refitted by the Laplace likelihood (minutes of CPU); "
        "tests/models/power/test_power_ordinal.py runs the same simulations on fewer"
    ),
    "longitudinal evaluate study --out study/evaluate --seeds 5 --scheduler local:2": (
        "starts a Dask cluster of two worker processes; the same evaluation without "
        "--scheduler is run, and tests/longitudinal/predict/test_benchmark_scheduler.py "
        "checks that a scheduler gives the serial tables"
    ),
    "longitudinal fit insteval400.csv --engine bayes --family ordinal"
    ' --formula "y ~ service + (1 | s) + (1 | d)" --out fit.json': (
        "insteval400.csv (10,489 ratings of lme4's InstEval) is not in the repository, and "
        "the fit samples for about 22 minutes"
    ),
    "longitudinal fit insteval400.csv --engine bayes --family ordinal"
    ' --formula "y ~ service + (1 | s) + (1 | d)" --draws auto --out fit.json': (
        "insteval400.csv is not in the repository, and the fit compiles and samples for over "
        "a minute; tests/models/bayes/test_bayes_slow.py runs draws='auto' on a small model"
    ),
}

#: Files the guide's commands read that the guide does not ship, written before the commands.
#: bad.csv is the export whose refusal scoring.md shows: an answer out of range in its row 3
#: and text in its row 5.
INPUTS = {
    "bad.csv": "id,tas4_1,tas4_2,tas4_3,tas4_4\na1,1,2,3,4\na2,2,6,3,4\na3,3,3,3,3\na4,4,4,4,n/a\n",
}
#: Copies of repository files under the names the guide gives them: a hand-written study
#: directory (its own column names in study.toml) for "my-study", lme4's sleepstudy.
COPIES = {
    "my-study": "tests/data/studies/handmade/own_columns",
    "sleepstudy.csv": "tests/data/lme4_sleepstudy.csv",
}
#: Files that a Python block of a page writes, for a command that reads them.
WRITTEN_BY_PYTHON = {
    "codes.csv": "docs/guide/reliability.md",
    "pred.csv": "docs/guide/prediction.md",
}


@dataclass(frozen=True)
class Shown:
    """A command as a page shows it, and the lines the page shows it printing."""

    page: str
    command: str
    output: tuple[str, ...]


def _key(command: str) -> tuple[str, ...]:
    """The words of a command, as the shell reads them (quotes and comments resolved)."""
    return tuple(shlex.split(command, comments=True))


def _blocks(text: str) -> Iterator[tuple[str, list[str]]]:
    """Yield the info string and the lines of every fenced block of a Markdown page."""
    fence, info, lines = None, "", []
    for line in text.splitlines():
        stripped = line.lstrip()
        if fence is None:
            found = re.match(r"(`{3,}|~{3,})(.*)", stripped)
            if found:
                fence, info, lines = found.group(1), found.group(2).strip(), []
        elif stripped.startswith(fence) and not stripped[len(fence) :].strip():
            yield info, lines
            fence = None
        else:
            lines.append(line)


def _joined(lines: list[str], start: int) -> tuple[str, int]:
    """The command starting at ``lines[start]`` with its ``\\`` continuations; the next index."""
    parts, k = [], start
    while True:
        line = lines[k].rstrip()
        parts.append(line[:-1] if line.endswith("\\") else line)
        k += 1
        if not line.endswith("\\") or k == len(lines):
            return " ".join(p.strip() for p in parts), k


def shown_commands(text: str, page: str) -> list[Shown]:
    """Every command of the shell blocks of a Markdown page, with the output shown after it."""
    found = []
    for info, lines in _blocks(text):
        if info.lower() not in SHELL_BLOCKS:
            continue
        prompted = any(line.startswith("$ ") for line in lines)
        k = 0
        while k < len(lines):
            line = lines[k]
            first = line.split()[0] if line.split() else ""
            if prompted and line.startswith("$ "):
                command, k = _joined(lines, k)
                output = []
                while k < len(lines) and not lines[k].startswith("$ "):
                    output.append(lines[k])
                    k += 1
                found.append(Shown(page, command[2:].strip(), tuple(output)))
            elif not prompted and (first in PROGRAMS or "/bin/" in first):
                command, k = _joined(lines, k)
                found.append(Shown(page, command, ()))
            else:
                k += 1
    return found


def _pages() -> list[Path]:
    pages = [ROOT / "README.md"]
    pages += sorted(
        p
        for p in DOCS.rglob("*.md")
        if not {"_build", "notebooks"} & set(p.relative_to(DOCS).parts)
    )
    return pages


def documented() -> list[Shown]:
    """Every command of README.md and docs/, page by page."""
    return [
        shown
        for page in _pages()
        for shown in shown_commands(
            page.read_text(encoding="utf-8"), page.relative_to(ROOT).as_posix()
        )
    ]


def test_the_reader_of_blocks_finds_prompted_and_bare_commands():
    page = (
        "Text `longitudinal inline` is no command.\n\n"
        "```\n$ longitudinal fit a.csv \\\n      --out b.json\nwrote b.json\n"
        "$ head -1 x.csv\nid\n```\n\n"
        "```\nmake demo    # a comment\nsurveys/   a layout line\n```\n\n"
        '```python\nprint("python is no command")\n```\n'
    )
    assert shown_commands(page, "p.md") == [
        Shown("p.md", "longitudinal fit a.csv --out b.json", ("wrote b.json",)),
        Shown("p.md", "head -1 x.csv", ("id",)),
        Shown("p.md", "make demo    # a comment", ()),
    ]
    assert _key("make demo    # a comment") == ("make", "demo")


def test_every_command_shown_is_run_or_listed():
    shown = {_key(s.command): s for s in documented()}
    run = {_key(c) for c in RUN}
    listed = {_key(c) for c in NOT_RUN}
    assert not run & listed
    new = [f"{s.page}: {s.command}" for key, s in shown.items() if key not in run | listed]
    assert new == [], "add each new command of the documentation to RUN, or to NOT_RUN with why"
    gone = [" ".join(key) for key in sorted((run | listed) - set(shown))]
    assert gone == [], "commands the documentation no longer shows"


def test_the_commands_not_run_are_commands_of_the_command_line():
    from longitudinal.cli._main import build_parser

    parser = build_parser()
    for command in NOT_RUN:
        words = _key(command)
        if words[0] == "longitudinal":
            assert parser.parse_args(list(words[1:])).command == words[1]


def test_make_demo_runs_the_demo_command():
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    recipe = re.search(r"^demo:.*\n\t(.*)$", makefile, re.M).group(1)
    assert _key(recipe) == ("$(BIN)/longitudinal", "demo", "--out", "demo-report", "--overwrite")
    assert ("longitudinal", "demo", "--out", "demo-report") in {_key(c) for c in RUN}


def _python_block(page: str, writes: str) -> str:
    """The Python block of ``page`` that writes the file ``writes``."""
    text = (ROOT / page).read_text(encoding="utf-8")
    blocks = [
        "\n".join(lines)
        for info, lines in _blocks(text)
        if info == "python" and f'"{writes}"' in "\n".join(lines)
    ]
    assert len(blocks) == 1, f"{page}: one Python block should write {writes}"
    return blocks[0]


def _run(command: str, folder: Path) -> CommandRun:
    words = _key(command)
    for name, page in WRITTEN_BY_PYTHON.items():
        if name in words and not (folder / name).exists():
            exec(compile(_python_block(page, name), page, "exec"), {"__name__": "__guide__"})
    if words[0] == "head":  # head -N FILE
        lines = (folder / words[2]).read_text(encoding="utf-8").splitlines()
        return CommandRun(0, "\n".join(lines[: int(words[1][1:])]) + "\n", "")
    assert words[0].endswith("longitudinal"), command
    return run_command(words[1:])


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    """The working folder of the commands."""
    return tmp_path_factory.mktemp("guide")


@pytest.fixture(scope="module")
def ran(folder) -> dict[str, CommandRun]:
    """Run every command of RUN, in order, in one working folder; what each returned."""
    (folder / "tests").symlink_to(ROOT / "tests", target_is_directory=True)
    for name, text in INPUTS.items():
        (folder / name).write_text(text, encoding="utf-8")
    for name, source in COPIES.items():
        copy = shutil.copytree if (ROOT / source).is_dir() else shutil.copyfile
        copy(ROOT / source, folder / name)
    results = {}
    with draft_figures(), pytest.MonkeyPatch.context() as patch:
        patch.chdir(folder)
        for command in RUN:
            results[command] = _run(command, folder)
    return results


def _flat(text: str) -> str:
    return " ".join(text.split())


@pytest.mark.parametrize("command", RUN)
def test_the_command_runs_as_shown(ran, command):
    done = ran[command]
    assert done.code == EXIT.get(command, 0), done.err[-3000:]
    printed = _flat(done.out + "\n" + done.err)
    shown = [s for s in documented() if _key(s.command) == _key(command)]
    assert shown, "the documentation no longer shows the command"
    missing = [
        f"{s.page}: {line}" for s in shown for line in s.output if _flat(line) not in printed
    ]
    assert missing == [], printed[-3000:]


def test_the_readme_python_examples_run(ran, folder):
    """The README's Python blocks run as shown on the study its commands simulated."""
    assert ran["longitudinal simulate --out study --seed 2024"].code == 0
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = ["\n".join(lines) for info, lines in _blocks(text) if info == "python"]
    assert len(blocks) == 2, "the README shows two Python examples"
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(folder)
        for block in blocks:
            exec(compile(block, "README.md", "exec"), {"__name__": "__readme__"})
