"""Ref expressions: branches, tags, commit ids and prefixes, with ~, ^ and @ modifiers."""

from __future__ import annotations

import pytest

from kvlake.errors import InvalidInputError, RefNotFoundError
from kvlake.graveler.graveler import Graveler
from kvlake.graveler.records import Commit, Repository
from kvlake.graveler.refs.refexpr import parse_ref
from kvlake.graveler.refs.store import Refs
from tests.graveler.helpers import all_keys, value
from tests.support import FakeClock


@pytest.fixture
def repo(graveler: Graveler, namespace: str) -> Repository:
    return graveler.create_repository("repo1", storage_namespace=namespace)


def _commit(graveler: Graveler, repo: Repository, branch: str, key: bytes, text: str) -> str:
    graveler.set(repo, branch, key, value(text))
    return graveler.commit(repo, branch, committer="t", message=text)


@pytest.fixture
def history(graveler: Graveler, repo: Repository, clock: FakeClock) -> dict[str, str]:
    """root <- a <- b <- m (merge of b and x), x on branch dev from a."""
    root = graveler.get_branch(repo, "main").commit_id
    a = _commit(graveler, repo, "main", b"k", "a")
    graveler.create_branch(repo, "dev", "main")
    clock.advance(1)
    b = _commit(graveler, repo, "main", b"k", "b")
    x = _commit(graveler, repo, "dev", b"d", "x")
    clock.advance(1)
    m = graveler.merges.merge(repo, "dev", "main", committer="t")
    return {"root": root, "a": a, "b": b, "x": x, "m": m}


def test_plain_refs_resolve_to_their_commits(
    graveler: Graveler, repo: Repository, history: dict[str, str]
) -> None:
    graveler.create_tag(repo, "v1", history["b"])
    assert graveler.resolve_ref(repo, "main").commit_id == history["m"]
    assert graveler.resolve_ref(repo, "main").branch == "main"
    assert graveler.resolve_ref(repo, "v1").commit_id == history["b"]
    assert graveler.resolve_ref(repo, history["x"]).commit_id == history["x"]
    assert graveler.resolve_ref(repo, history["x"][:7]).commit_id == history["x"]


def test_ancestry_modifiers_walk_first_parents_and_numbered_parents(
    graveler: Graveler, repo: Repository, history: dict[str, str]
) -> None:
    graveler.create_tag(repo, "v1", "main")
    expected = {
        "main~": "b",
        "main~1": "b",
        "main~~": "a",
        "main~2": "a",
        "main~3": "root",
        "main^": "b",
        "main^1": "b",
        "main^2": "x",
        "main^2~1": "a",
        "main^0": "m",
        "main~0": "m",
        "main^^": "a",
        "v1~2": "a",
        "main@~1": "b",
        f"{history['m'][:10]}^2": "x",
    }
    for ref, name in expected.items():
        resolved = graveler.resolve_ref(repo, ref)
        assert resolved.commit_id == history[name], ref
        assert resolved.branch is None and resolved.staging_tokens == (), ref


def test_at_reads_the_committed_state_of_a_branch_ignoring_staging(
    graveler: Graveler, repo: Repository, history: dict[str, str]
) -> None:
    graveler.set(repo, "main", b"k", value("staged"))
    graveler.set(repo, "main", b"new", value("staged"))
    assert graveler.get(repo, "main", b"k") == value("staged")
    assert graveler.get(repo, "main@", b"k") == value("b")
    assert dict(graveler.list(repo, "main@")) == {b"k": value("b"), b"d": value("x")}
    resolved = graveler.resolve_ref(repo, "main@")
    assert resolved.branch == "main" and resolved.staging_tokens == ()
    assert graveler.get(repo, "main~1", b"k") == value("b")


def test_branch_shadows_tag_and_tag_shadows_commit_prefix(
    graveler: Graveler, repo: Repository, history: dict[str, str]
) -> None:
    prefix = history["a"][:8]
    graveler.create_tag(repo, prefix, history["b"])  # a tag named like a commit prefix
    assert graveler.resolve_ref(repo, prefix).commit_id == history["b"]
    graveler.create_branch(repo, prefix, history["x"])
    assert graveler.resolve_ref(repo, prefix).commit_id == history["x"]


def test_ambiguous_commit_prefix_is_refused(
    graveler: Graveler, repo: Repository, namespace: str
) -> None:
    metarange = graveler.committed.empty_metarange(namespace)
    by_prefix: dict[str, str] = {}
    n = 0
    while True:  # about 300 commits until two share 4 hex digits
        n += 1
        commit = Commit(
            committer="t",
            message=str(n),
            metarange_id=metarange,
            creation_date=n,
            parents=(),
            metadata={},
            generation=1,
        )
        commit_id = Refs(graveler.store).add_commit(repo, commit)
        if commit_id[:4] in by_prefix:
            break
        by_prefix[commit_id[:4]] = commit_id
    with pytest.raises(InvalidInputError, match="ambiguous"):
        graveler.resolve_ref(repo, commit_id[:4])
    other = by_prefix[commit_id[:4]]
    common = next(i for i in range(64) if commit_id[i] != other[i])
    assert graveler.resolve_ref(repo, commit_id[: common + 1]).commit_id == commit_id


@pytest.mark.parametrize(
    "ref",
    ["", "~~", "~", "^2", "@", "main~x", "main^x", "main@@", "main~1@", "a\0b", "ma in", "a/b"],
)
def test_malformed_expressions_are_invalid_input_and_change_nothing(
    graveler: Graveler, repo: Repository, history: dict[str, str], ref: str
) -> None:
    before = all_keys(graveler.store)
    with pytest.raises(InvalidInputError, match="invalid|empty"):
        graveler.resolve_ref(repo, ref)
    with pytest.raises(InvalidInputError):
        graveler.create_branch(repo, "new", ref)
    assert all_keys(graveler.store) == before


@pytest.mark.parametrize("ref", ["nope", "main~9", "main^3", "main~2^2", "abcd", "0" * 64, "v9~1"])
def test_unknown_refs_and_walks_past_history_are_not_found(
    graveler: Graveler, repo: Repository, history: dict[str, str], ref: str
) -> None:
    with pytest.raises(RefNotFoundError, match="not found"):
        graveler.resolve_ref(repo, ref)


def test_at_after_a_tag_or_commit_is_invalid(
    graveler: Graveler, repo: Repository, history: dict[str, str]
) -> None:
    graveler.create_tag(repo, "v1", "main")
    for ref in ("v1@", f"{history['a']}@"):
        with pytest.raises(InvalidInputError, match="only a branch"):
            graveler.resolve_ref(repo, ref)


def test_parse_splits_base_at_and_steps() -> None:
    parsed = parse_ref("main@~2^3~")
    assert (parsed.base, parsed.committed_only, parsed.steps) == (
        "main",
        True,
        (("~", 2), ("^", 3), ("~", 1)),
    )
    assert parse_ref("v1.0").steps == ()
