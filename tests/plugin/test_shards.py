"""``--harness-shard K/N`` under pytest: each CI matrix job collects its share of the
scenario items, the shares together are every item once, and the result files of
the jobs, copied into one folder, do not overwrite one another."""

from __future__ import annotations

from tests.plugin.test_scenario_items import collected


def test_the_shards_collect_every_item_once(project) -> None:
    project.add("hello", "crashy")
    every = collected(project.pytester.runpytest("--collect-only", "-q"))
    shares = [collected(project.pytester.runpytest("--collect-only", "-q",
                                                   "--harness-shard", f"{k}/3"))
              for k in (1, 2, 3)]
    assert sorted(item for share in shares for item in share) == sorted(every)
    assert all(share != every for share in shares)


def test_each_shard_writes_results_of_its_own_name(project) -> None:
    project.add("hello", "crashy")
    for k in (1, 2):
        project.pytester.runpytest("-q", "--harness-shard", f"{k}/2",
                                   "--harness-results", "results")
    names = sorted(p.name for p in (project.pytester.path / "results").glob("cases*.jsonl"))
    assert names == ["cases-shard1of2-main.jsonl", "cases-shard2of2-main.jsonl"]


def test_a_bad_shard_is_a_usage_error(project) -> None:
    result = project.pytester.runpytest("--collect-only", "--harness-shard", "3/2")
    assert result.ret == 4
    result.stderr.fnmatch_lines(["*--harness-shard: got '3/2': K must be between 1 and 2*"])
