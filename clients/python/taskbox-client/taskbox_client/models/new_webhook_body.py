from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="NewWebhookBody")


@_attrs_define
class NewWebhookBody:
    """
    Attributes:
        events (list[str]): Event types (`job.completed`, …), or `["*"]` for all of them. Example: ['job.completed',
            'job.failed'].
        url (str): An `http` or `https` URL that resolves to a public address (unless
            the server allows private ones). Example: https://example.com/taskbox.
        secret (None | str | Unset): The key deliveries are signed with (16 to 256 characters); made for
            the webhook when left out, and shown once.
    """

    events: list[str]
    url: str
    secret: None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        events = self.events

        url = self.url

        secret: None | str | Unset
        if isinstance(self.secret, Unset):
            secret = UNSET
        else:
            secret = self.secret

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "events": events,
                "url": url,
            }
        )
        if secret is not UNSET:
            field_dict["secret"] = secret

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        events = cast(list[str], d.pop("events"))

        url = d.pop("url")

        def _parse_secret(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        secret = _parse_secret(d.pop("secret", UNSET))

        new_webhook_body = cls(
            events=events,
            url=url,
            secret=secret,
        )

        return new_webhook_body
