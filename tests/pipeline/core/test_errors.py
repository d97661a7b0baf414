"""exception_chain: the one walk over wrapped errors that the interrupt check, the log filter and
storage's failure kinds share."""
from pipeline.core.errors import exception_chain
from pipeline.core.storage import failure_kind


def raised(exc_factory):
    try:
        exc_factory()
    except BaseException as e:  # noqa: BLE001 - the test wants whatever was raised
        return e


def test_the_chain_follows_cause_and_context_nearest_first():
    def inner():
        raise KeyError("inner")

    def wrapped():
        try:
            inner()
        except KeyError as e:
            raise RuntimeError("outer") from e

    def handled():
        try:
            wrapped()
        except RuntimeError:
            raise ValueError("while handling")

    assert [type(e) for e in exception_chain(raised(handled))] == [ValueError, RuntimeError, KeyError]
    assert list(exception_chain(None)) == []


def test_a_looping_chain_ends_and_the_limit_holds():
    a, b = RuntimeError("a"), RuntimeError("b")
    a.__cause__, b.__cause__ = b, a
    assert list(exception_chain(a)) == [a, b]
    deep = [RuntimeError(str(i)) for i in range(50)]
    for x, y in zip(deep, deep[1:]):
        x.__cause__ = y
    assert len(list(exception_chain(deep[0], limit=5))) == 5


def test_a_credentials_error_wrapped_by_a_backend_is_still_found():
    class NoCredentialsError(Exception):
        pass

    def backend():
        try:
            raise NoCredentialsError("Unable to locate credentials")
        except NoCredentialsError as e:
            raise OSError("s3fs: could not read") from e

    assert failure_kind(raised(backend)) == "no_credentials"
    assert failure_kind(FileNotFoundError("x")) == "not_found"
