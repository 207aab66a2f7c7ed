"""One table maps every kvlake error to a status by walking the error's MRO."""

from __future__ import annotations

import inspect

import pytest

from kvlake import errors
from kvlake.api.errors import STATUS, status_of


def _error_classes() -> list[type[errors.KvlakeError]]:
    return [
        cls
        for _, cls in inspect.getmembers(errors, inspect.isclass)
        if issubclass(cls, errors.KvlakeError) and cls is not errors.KvlakeError
    ]


@pytest.mark.parametrize("cls", _error_classes(), ids=lambda cls: cls.__name__)
def test_every_error_class_reaches_a_table_entry(cls: type[errors.KvlakeError]) -> None:
    assert any(base in STATUS for base in cls.__mro__), f"{cls.__name__} has no status"


@pytest.mark.parametrize(
    ("error", "status"),
    [
        (errors.BranchNotFoundError("x"), 404),
        (errors.RepositoryDeletingError("x"), 410),
        (errors.ConflictError("x"), 409),
        (errors.PreconditionFailedError("x"), 412),
        (errors.TooManyTriesError("x"), 429),
        (errors.NoChangesError("x"), 400),
        (errors.DirtyBranchError("x"), 400),
        (errors.AuthenticationError("x"), 401),
        (errors.PermissionDeniedError("x"), 401),
        (errors.RateLimitedError("x"), 429),
        (errors.UnavailableError("x"), 503),
        (RuntimeError("bug"), 500),
    ],
)
def test_statuses_follow_lakefs(error: Exception, status: int) -> None:
    assert status_of(error) == status


def test_the_most_specific_class_wins() -> None:
    class Special(errors.TooManyTriesError):
        pass

    assert status_of(Special("x")) == 429
