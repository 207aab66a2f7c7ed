"""An import's one commit: the head with each destination replaced, on a clean branch only."""

from __future__ import annotations

import pytest

from kvlake.blockstore import BlockStore
from kvlake.errors import (
    DirtyBranchError,
    InvalidInputError,
)
from kvlake.graveler import Graveler, Repository
from tests.graveler.helpers import contents, value
from tests.graveler.stepping import calls_of, paused_graveler, run_paused
from tests.support import FakeClock


@pytest.fixture
def repo(graveler: Graveler, namespace: str) -> Repository:
    repository = graveler.create_repository("repo", storage_namespace=namespace)
    for key in ("dest/old", "dest/kept-by-import", "destination-sibling", "other", "one"):
        graveler.set(repository, "main", key.encode(), value(f"head {key}"))
    graveler.commit(repository, "main", committer="t", message="head")
    return repository


def imported(graveler: Graveler, repo: Repository, *entries: str) -> str:
    return graveler.committed.write_metarange(
        repo.storage_namespace,
        ((key.encode(), value(f"imported {key}")) for key in sorted(entries)),
    )


def test_a_prefix_is_replaced_whole_and_an_object_key_by_key(
    graveler: Graveler, repo: Repository
) -> None:
    metarange = imported(graveler, repo, "dest/kept-by-import", "dest/new", "one")
    commit_id = graveler.imports.commit_metarange(
        repo, "main", metarange, prefixes=[b"dest/"], objects=[b"one"], committer="me", message="i"
    )
    assert graveler.get_branch(repo, "main").commit_id == commit_id
    assert {k: v.data.decode() for k, v in contents(graveler, repo, "main").items()} == {
        b"dest/kept-by-import": "imported dest/kept-by-import",
        b"dest/new": "imported dest/new",
        b"destination-sibling": "head destination-sibling",
        b"one": "imported one",
        b"other": "head other",
    }
    commit = graveler.get_commit(repo, commit_id)
    assert (commit.committer, commit.message, len(commit.parents)) == ("me", "i", 1)


def test_an_empty_import_of_a_prefix_empties_it(graveler: Graveler, repo: Repository) -> None:
    graveler.imports.commit_metarange(
        repo,
        "main",
        imported(graveler, repo),
        prefixes=[b"dest/"],
        objects=[],
        committer="t",
        message="",
    )
    assert sorted(contents(graveler, repo, "main")) == [b"destination-sibling", b"one", b"other"]


def test_an_import_needs_a_clean_branch(graveler: Graveler, repo: Repository) -> None:
    graveler.set(repo, "main", b"staged", value("s"))
    with pytest.raises(DirtyBranchError):
        graveler.imports.commit_metarange(
            repo,
            "main",
            imported(graveler, repo),
            prefixes=[b"d/"],
            objects=[],
            committer="t",
            message="",
        )
    with pytest.raises(DirtyBranchError):
        graveler.check_clean(repo, "main")


def test_overlapping_destinations_are_refused(graveler: Graveler, repo: Repository) -> None:
    for prefixes, objects in (([b"a/", b"a/b/"], []), ([b"a/"], [b"a/x"]), ([b""], [b"x"])):
        with pytest.raises(InvalidInputError, match="overlap"):
            graveler.imports.commit_metarange(
                repo,
                "main",
                imported(graveler, repo),
                prefixes=prefixes,
                objects=objects,
                committer="t",
                message="",
            )


def test_keep_staged_commits_only_the_metarange_and_leaves_staged_changes_staged(
    graveler: Graveler, repo: Repository
) -> None:
    graveler.set(repo, "main", b"staged", value("s"))
    graveler.set(repo, "main", b"dest/new", value("staged over the import"))
    commit_id = graveler.imports.commit_metarange(
        repo,
        "main",
        imported(graveler, repo, "dest/new", "dest/x"),
        prefixes=[b"dest/"],
        objects=[],
        committer="t",
        message="a job's files",
        keep_staged=True,
    )

    committed = {k: v.data.decode() for k, v in contents(graveler, repo, commit_id).items()}
    assert committed[b"dest/new"] == "imported dest/new" and b"staged" not in committed
    assert b"dest/old" not in committed
    on_branch = {k: v.data.decode() for k, v in contents(graveler, repo, "main").items()}
    assert on_branch[b"staged"] == "s" and on_branch[b"dest/new"] == "staged over the import"
    assert graveler.get_branch(repo, "main").commit_id == commit_id
    graveler.commit(repo, "main", committer="t", message="the staged changes, later")
    assert contents(graveler, repo, "main")[b"dest/x"].data == b"imported dest/x"


def test_a_commit_racing_a_keep_staged_commit_at_any_call_loses_nothing(
    graveler: Graveler, repo: Repository, clock: FakeClock, lake_blocks: BlockStore
) -> None:
    paused, stepping = paused_graveler(graveler, clock, lake_blocks)
    graveler.set(repo, "main", b"probe", value("p"))
    total = calls_of(stepping, lambda: paused.commit(repo, "main", committer="t", message="m"))
    for n in range(total):
        staged, job = b"staged-%d" % n, f"job/{n}"
        graveler.set(repo, "main", staged, value("s"))

        def job_commit(job: str = job) -> None:
            graveler.imports.commit_metarange(
                repo,
                "main",
                imported(graveler, repo, job),
                prefixes=[],
                objects=[],
                committer="spark",
                message="job",
                keep_staged=True,
            )

        run_paused(
            stepping,
            lambda: paused.commit(repo, "main", committer="t", message=f"{n}"),  # noqa: B023
            at_call=n,
            intruder=job_commit,
        )
        branch = graveler.get_branch(repo, "main")
        head = contents(graveler, repo, branch.commit_id)
        assert staged in head and job.encode() in head, n  # both committed, nothing lost
        assert branch.sealed_tokens == (), n
