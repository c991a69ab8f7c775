from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define

from ..models.retry_version import RetryVersion
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.retry_filter import RetryFilter


T = TypeVar("T", bound="RetryManyBody")


@_attrs_define
class RetryManyBody:
    """
    Attributes:
        digest (None | RetryVersion | Unset):
        filter_ (RetryFilter | Unset):
        limit (int | None | Unset): Most jobs to re-drive (1 to 10000, the default).
    """

    digest: None | RetryVersion | Unset = UNSET
    filter_: RetryFilter | Unset = UNSET
    limit: int | None | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        digest: None | str | Unset
        if isinstance(self.digest, Unset):
            digest = UNSET
        elif isinstance(self.digest, RetryVersion):
            digest = self.digest.value
        else:
            digest = self.digest

        filter_: dict[str, Any] | Unset = UNSET
        if not isinstance(self.filter_, Unset):
            filter_ = self.filter_.to_dict()

        limit: int | None | Unset
        if isinstance(self.limit, Unset):
            limit = UNSET
        else:
            limit = self.limit

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if digest is not UNSET:
            field_dict["digest"] = digest
        if filter_ is not UNSET:
            field_dict["filter"] = filter_
        if limit is not UNSET:
            field_dict["limit"] = limit

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.retry_filter import RetryFilter  # noqa: PLC0415

        d = dict(src_dict)

        def _parse_digest(data: object) -> None | RetryVersion | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                digest_type_1 = RetryVersion(data)

                return digest_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | RetryVersion | Unset, data)

        digest = _parse_digest(d.pop("digest", UNSET))

        _filter_ = d.pop("filter", UNSET)
        filter_: RetryFilter | Unset
        if isinstance(_filter_, Unset):
            filter_ = UNSET
        else:
            filter_ = RetryFilter.from_dict(_filter_)

        def _parse_limit(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        limit = _parse_limit(d.pop("limit", UNSET))

        retry_many_body = cls(
            digest=digest,
            filter_=filter_,
            limit=limit,
        )

        return retry_many_body
