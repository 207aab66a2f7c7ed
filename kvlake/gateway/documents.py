"""S3's XML documents: written as clients parse them, and read strictly from request bodies.

Answers are built from `Node`s (name, text or children) in S3's namespace.
Request bodies (DeleteObjects, CompleteMultipartUpload) are bounded before
parsing and parsed without DTDs or entities: a malformed or oversized document
is S3's MalformedXML, and nothing has changed.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Iterable
from typing import Final, TypeAlias
from xml.etree import ElementTree
from xml.sax.saxutils import escape

from starlette.responses import Response

from kvlake.gateway.errors import S3Error

NAMESPACE: Final = "http://s3.amazonaws.com/doc/2006-03-01/"
MAX_XML_BYTES: Final = 2 << 20
"""A DeleteObjects of 1,000 long keys fits; anything bigger is refused unread."""


class Fragment(str):
    """Markup already rendered, its text escaped: written as it is."""

    __slots__ = ()


Node: TypeAlias = "tuple[str, str | Iterable[Node]] | Fragment"
"""An element (its name, and its text or its child elements), or a rendered fragment: a
listing writes each of its thousand rows as one f-string rather than a tree of nodes."""


def _render(node: Node, out: list[str]) -> None:
    if isinstance(node, Fragment):
        out.append(node)
        return
    name, content = node
    if isinstance(content, str):
        out.append(f"<{name}>{escape(content)}</{name}>")
        return
    out.append(f"<{name}>")
    for child in content:
        _render(child, out)
    out.append(f"</{name}>")


def xml_response(root: Node, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    """The document `root` in S3's namespace, as `application/xml`."""
    assert not isinstance(root, Fragment), "a document's root is an element"
    name, content = root
    out = ['<?xml version="1.0" encoding="UTF-8"?>\n', f'<{name} xmlns="{NAMESPACE}">']
    if isinstance(content, str):
        out.append(escape(content))
    else:
        for child in content:
            _render(child, out)
    out.append(f"</{name}>")
    return Response("".join(out).encode(), status, headers, media_type="application/xml")


@functools.lru_cache(maxsize=4096)
def _second(seconds: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds))


def timestamp(moment: float) -> str:
    """ISO 8601 in UTC with milliseconds, as S3 lists LastModified. The objects of a listing
    were mostly written in few seconds: each second is formatted once."""
    seconds = int(moment)
    return f"{_second(seconds)}.{int((moment - seconds) * 1000):03d}Z"


def text(value: str) -> str:
    """`value` escaped for XML text; most keys need nothing, and are returned as they are."""
    if "&" in value or "<" in value or ">" in value:
        return escape(value)
    return value


def malformed(why: str) -> S3Error:
    return S3Error(
        400,
        "MalformedXML",
        f"The XML you provided was not well-formed or did not validate: {why}",
    )


def parse(body: bytes) -> ElementTree.Element:
    """The document's root with namespaces dropped from tags; MalformedXML if it is not XML."""
    if len(body) > MAX_XML_BYTES:
        raise malformed(f"the document is over {MAX_XML_BYTES} bytes")
    if b"<!DOCTYPE" in body or b"<!ENTITY" in body:
        raise malformed("DTDs and entities are not accepted")
    try:
        root = ElementTree.fromstring(body)
    except ElementTree.ParseError as exc:
        raise malformed(str(exc)) from None
    for element in root.iter():
        element.tag = element.tag.rpartition("}")[2]
    return root
