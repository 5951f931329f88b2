"""The documentation: the site builds with warnings as errors, documents every scene key,
command-line option and node parameter, and the README is the short one the issue asks
for (two set-up commands first, no commit named as the source of a fact, the headline
benchmark table current with the newest bench_sim CSV)."""

import re
import subprocess
from html import escape
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

import docs_bench  # noqa: E402
import docs_tables  # noqa: E402

README = ROOT / "README.md"
#: a commit-like token: 7-40 hex digits with at least one letter and one digit
HEX = re.compile(r"\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,40}\b")


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The site built by ``mkdocs build --strict`` (mkdocs comes with the test extra)."""
    import mkdocs  # noqa: F401  (installed by the test extra: a missing one is a failure)

    out = tmp_path_factory.mktemp("site")
    run = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-q",
                          "-d", str(out)], cwd=ROOT, capture_output=True, text=True,
                         env={**_env(), "NO_MKDOCS_2_WARNING": "1"}, timeout=600)
    assert run.returncode == 0, f"mkdocs build --strict failed:\n{run.stdout}\n{run.stderr}"
    return out


def _env():
    import os

    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(ROOT)] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    return env


def page(site, name):
    return (site / name / "index.html").read_text(encoding="utf-8")


def test_every_scene_key_is_documented_with_its_default(site):
    html = page(site, "scenes")
    sections = docs_tables.scene_sections()
    assert sum(len(rows) for _, rows in sections) >= 60  # the loader's key sets were read
    for section, rows in sections:
        if section:
            assert f"<code>{escape(section)}</code>" in html, section
        for key, _ in rows:
            assert f"<td><code>{key}</code></td>" in html, f"{section}.{key}"
    # a loader key is present with its default: two spot checks against the loader's own
    assert "<td><code>friction_directions</code></td>\n<td><code>8</code></td>" in html
    assert "<td><code>time_step</code></td>\n<td><code>0.001</code></td>" in html


def test_a_scene_key_without_prose_stops_the_build(monkeypatch):
    prose = dict(docs_tables.scene_prose())
    del prose["contact.max_contacts"]
    prose["contact.no_such_key"] = "text"
    monkeypatch.setitem(docs_tables._PROSE, "data", prose)
    with pytest.raises(docs_tables.DocsError, match="max_contacts.*no_such_key"):
        docs_tables.scene_keys_markdown()


def test_every_cli_option_is_documented(site):
    html = page(site, "cli")
    options = docs_tables.cli_options()
    commands = {c for c, _, _ in options}
    assert {"contact-lcp simulate", "contact-lcp sweep", "contact-lcp view",
            "contact_lcp_node"} <= commands
    for command, name, help_text in options:
        assert help_text.strip(), f"{command} {name} has no help text"
        for option in name.split(", "):
            assert f"<code>{option}</code>" in html, f"{command} {option}"


def test_every_node_parameter_is_documented(site):
    from contact_lcp.ros import config

    html = page(site, "ros")
    for p in config.PARAMETERS:
        assert f"<td><code>{p.name}</code></td>" in html, p.name


def test_the_benchmark_page_names_each_newest_result_and_its_commit(site):
    html = page(site, "benchmarks")
    for kind, files in docs_bench.result_files().items():
        if kind in docs_bench.SKIP:
            continue
        stamp, rev, dirty, tag, path = files[-1]
        assert path.name in html, kind
        assert f"Commit <code>{rev}</code>" in html, kind
        assert (site / "benchmarks" / "results" / path.name).is_file()
    assert "machine:" in html
    assert (site / "figures" / "contact_models_cost.png").stat().st_size > 1000


def readme_lines():
    return README.read_text(encoding="utf-8").splitlines()


def test_the_readme_is_short_and_starts_with_what_it_does_then_the_two_setup_commands():
    lines = readme_lines()
    assert len(lines) <= 250, f"README.md has {len(lines)} lines"
    assert lines[0] == "# contact_lcp"
    first = next(i for i, line in enumerate(lines) if line.startswith("## "))
    intro = " ".join(lines[1:first])
    assert "simulates articulated robots" in intro and len(intro.split()) > 50
    assert lines[first] == "## Set-up on a fresh machine"
    end = next(i for i in range(first + 1, len(lines)) if lines[i].startswith("## "))
    commands = [line.strip() for line in lines[first:end] if line.startswith("    ")]
    assert commands == ["bash scripts/main.sh", "bash scripts/test.sh"]
    # CI runs the README's test command verbatim
    assert "bash scripts/test.sh" in (ROOT / ".ci" / "run").read_text()


def test_the_readme_names_no_commit_outside_links_to_result_files():
    text = README.read_text(encoding="utf-8")
    # links to result files (CSVs, and the plots a benchmark writes beside them)
    text = re.sub(r"\[[^\]]*\]\(benchmarks/results/[^)]*\.(csv|png)\)", "", text)
    assert not HEX.findall(text)


def test_the_handwritten_docs_name_no_commit():
    for path in sorted((ROOT / "docs").rglob("*.md")):
        found = HEX.findall(path.read_text(encoding="utf-8"))
        assert not found, f"{path.relative_to(ROOT)} names {found}"


def test_the_readme_headline_table_is_that_of_the_newest_bench_sim_csv():
    assert docs_bench.readme_headline() == docs_bench.headline_markdown(), (
        "README's headline benchmark is stale: run python scripts/docs_bench.py --readme")


def test_no_comment_in_the_package_cites_a_commit():
    found = []
    for path in sorted((ROOT / "contact_lcp").rglob("*.py")):
        for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for token in HEX.findall(line):
                if not re.search(r"\d+e\d+", token):  # a float written in hex-like digits
                    found.append(f"{path.relative_to(ROOT)}:{i}: {token}")
    assert not found, found
