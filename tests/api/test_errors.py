"""One table maps every kvlake error to a status by walking the error's MRO."""

from __future__ import annotations

import inspect

import pytest

from kvlake import errors
from kvlake.api.errors import STATUS, OperationError, error_body, status_of
from kvlake.api.wire.common import Error


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
        (errors.DefaultBranchError("x"), 403),
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


def test_lakefs_text_in_message_and_kvlakes_in_detail() -> None:
    body = error_body(errors.BranchNotFoundError("branch 'dev' not found in 'r'"))
    assert body == Error(message="branch not found", detail="branch 'dev' not found in 'r'")
    assert error_body(errors.KeyNotFoundError("KV key b'k' not found")) == Error(
        message="not found"
    )
    assert error_body(errors.InvalidInputError("bad amount")) == Error(message="bad amount")
    cause = errors.ConflictError("branch 'dev' already exists")
    overridden = OperationError(cause, "branch already exists: not unique")
    assert status_of(overridden) == 409
    assert error_body(overridden).detail == "branch 'dev' already exists"
