"""Events to an MQTT broker (paho-mqtt, the Eclipse Foundation's maintained client), the way Home Assistant reads
them: a sensor per person appears by itself through MQTT discovery, no YAML.

Topics (`PREFIX` facerec):
- `facerec/<camera>/events`: every event of that camera, as JSON (not retained);
- `facerec/person/<slug>/state`: `ON` while the person is on any camera, `OFF` once they left every one (retained,
  so Home Assistant knows after a restart); `facerec/person/<slug>/attributes`: the last event (camera, score, when);
  strangers are the one person "unknown";
- `homeassistant/binary_sensor/facerec_<slug>/config` (retained): the discovery of each person's occupancy sensor,
  sent for every enrolled person when the sink starts and for anyone new on their first event;
- `facerec/status`: `online`, and `offline` as the broker's last will when facerec is gone.
A slug is the name in lower-case letters, digits and underscores plus six hex digits of its hash, so two names that
read alike never share a sensor, and no name can reach another topic (`+`, `#`, `/` never get through).
"""

from __future__ import annotations

import hashlib
import json
import re

from facerec.cameras.sinks import QUEUE_EVENTS, Sink
from facerec.cameras.visits import Event

PREFIX = "facerec"
DISCOVERY = "homeassistant"
STATUS_TOPIC = f"{PREFIX}/status"


def slug(name: str | None) -> str:
    text = "unknown" if name is None else name
    readable = re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")[:40] or "person"
    return f"{readable}_{hashlib.sha256(text.encode()).hexdigest()[:6]}" if name is not None else "unknown"


class MqttSink(Sink):
    """Events published to `host:port`; `people`: the enrolled names whose sensors are announced at once."""

    name = "mqtt"

    def __init__(self, host: str, port: int = 1883, people: list[str] = (), username: str | None = None,
                 password: str | None = None, client_id: str = "facerec") -> None:
        import paho.mqtt.client as mqtt

        super().__init__()
        self._address = f"{host}:{port}"
        self._client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=client_id)
        self._client.max_queued_messages_set(QUEUE_EVENTS)  # a broker away: at most this many wait, then refused
        self._client.reconnect_delay_set(1, 30)
        if username:
            self._client.username_pw_set(username, password)
        self._client.will_set(STATUS_TOPIC, "offline", qos=1, retain=True)
        self._client.on_connect = self._connected
        self._announced: set[str] = set()
        self._people = list(people)
        self._present: dict[str | None, set[str]] = {}  # person -> cameras they are on
        self._client.connect_async(host, port, keepalive=30)
        self._client.loop_start()

    def _connected(self, client, _userdata, _flags, reason, _properties) -> None:
        if getattr(reason, "is_failure", False):
            self.problem = f"the broker refused the connection: {reason}"
            return
        client.publish(STATUS_TOPIC, "online", qos=1, retain=True)
        self._announced.clear()  # a broker that restarted without persistence has forgotten them
        for person in [*self._people, None]:
            self._announce(person)

    def send(self, event: Event) -> None:
        person = event.name
        self._announce(person)
        self._publish(f"{PREFIX}/{slug_camera(event.camera)}/events", json.dumps(event.to_dict(), ensure_ascii=False))
        cameras = self._present.setdefault(person, set())
        (cameras.add if event.kind == "arrived" else cameras.discard)(event.camera)
        self._publish(f"{PREFIX}/person/{slug(person)}/state", "ON" if cameras else "OFF", retain=True)
        attributes = event.to_dict(with_face=False)
        self._publish(f"{PREFIX}/person/{slug(person)}/attributes", json.dumps(attributes, ensure_ascii=False),
                      retain=True)

    def _announce(self, person: str | None) -> None:
        key = slug(person)
        if key in self._announced:
            return
        config = {"name": person if person is not None else "Unknown person", "unique_id": f"facerec_{key}",
                  "object_id": f"facerec_{key}", "state_topic": f"{PREFIX}/person/{key}/state",
                  "json_attributes_topic": f"{PREFIX}/person/{key}/attributes", "payload_on": "ON",
                  "payload_off": "OFF", "device_class": "occupancy", "availability_topic": STATUS_TOPIC,
                  "device": {"identifiers": ["facerec"], "name": "facerec", "manufacturer": "facerec"}}
        self._publish(f"{DISCOVERY}/binary_sensor/facerec_{key}/config", json.dumps(config, ensure_ascii=False),
                      retain=True)
        self._announced.add(key)

    def _publish(self, topic: str, payload: str, retain: bool = False) -> None:
        if not self._client.is_connected():  # counted as failed, not held: the state topics catch up on the next
            raise ConnectionError(f"not connected to the MQTT broker at {self._address}")
        info = self._client.publish(topic, payload, qos=1, retain=retain)
        if info.rc != 0:
            raise ConnectionError(f"MQTT publish to {topic} refused (code {info.rc}): the broker is away")

    def close(self) -> None:
        info = self._client.publish(STATUS_TOPIC, "offline", qos=1, retain=True)
        if self._client.is_connected():
            info.wait_for_publish(timeout=2.0)
        self._client.disconnect()
        self._client.loop_stop()


def slug_camera(camera: str) -> str:
    """A camera's name as one topic level."""
    return re.sub(r"[^A-Za-z0-9_-]+", "_", camera)[:60] or "camera"
