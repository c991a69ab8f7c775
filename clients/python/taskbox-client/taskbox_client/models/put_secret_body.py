from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="PutSecretBody")


@_attrs_define
class PutSecretBody:
    """A secret's value. No `Debug`: nothing may print it.

    Attributes:
        value (str): The value: text of 8 bytes to 64 KiB. It is sealed at once and
            never shown again. Example: sk_live_….
    """

    value: str

    def to_dict(self) -> dict[str, Any]:
        value = self.value

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "value": value,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        value = d.pop("value")

        put_secret_body = cls(
            value=value,
        )

        return put_secret_body
