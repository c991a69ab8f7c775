from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="NetworkTally")


@_attrs_define
class NetworkTally:
    """What one attempt's outbound HTTP did, as its record and its tenant's
    usage keep it.

        Attributes:
            bytes_received (int): Response body bytes received.
            bytes_sent (int): Request body bytes sent.
            refused (int): Requests the host refused before anything went out.
            requests (int): Requests that went out (a connection was attempted).
    """

    bytes_received: int
    bytes_sent: int
    refused: int
    requests: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        bytes_received = self.bytes_received

        bytes_sent = self.bytes_sent

        refused = self.refused

        requests = self.requests

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "bytes_received": bytes_received,
                "bytes_sent": bytes_sent,
                "refused": refused,
                "requests": requests,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        bytes_received = d.pop("bytes_received")

        bytes_sent = d.pop("bytes_sent")

        refused = d.pop("refused")

        requests = d.pop("requests")

        network_tally = cls(
            bytes_received=bytes_received,
            bytes_sent=bytes_sent,
            refused=refused,
            requests=requests,
        )

        network_tally.additional_properties = d
        return network_tally

    @property
    def additional_keys(self) -> list[str]:
        return list(self.additional_properties.keys())

    def __getitem__(self, key: str) -> Any:
        return self.additional_properties[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self.additional_properties[key] = value

    def __delitem__(self, key: str) -> None:
        del self.additional_properties[key]

    def __contains__(self, key: str) -> bool:
        return key in self.additional_properties
