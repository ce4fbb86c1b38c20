"""What `facerec watch` watches and where its events go: from a TOML file (read by Python's `tomllib`, or `tomli`,
its source, on 3.10) and the command line, the command line winning. Secrets are never in either: a webhook's shared
secret and a broker's password are read from environment variables the configuration names
(`facerec.settings.named_secret`).

    [[camera]]
    name = "door"
    url = "rtsp://viewer:SECRET@192.168.1.20:554/stream1"   # the password is never printed (`redacted`)

    [webhook]
    url = "https://home.example/hooks/facerec"
    secret_env = "FACEREC_WEBHOOK_SECRET"

    [mqtt]
    host = "localhost"
    port = 1883
    username = "facerec"
    password_env = "FACEREC_MQTT_PASSWORD"

    [jsonl]
    path = "events.jsonl"

    [watch]
    leave_after = 10      # seconds without a face of a person before they "left"
    detect_fps = 5        # frames a second recognition takes from each camera
    crops = false         # an enrolled person's best face with their events
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

from facerec.cameras.source import redacted
from facerec.errors import InvalidArgument
from facerec.words.phrasing import one_line

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

MAX_CAMERAS = 64
MAX_CONFIG_BYTES = 1 << 20
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9 _.-]{0,59}$")


@dataclass
class Camera:
    name: str
    url: str


@dataclass
class WatchConfig:
    cameras: list[Camera] = field(default_factory=list)
    webhook_url: str | None = None
    webhook_secret_env: str | None = None
    mqtt_host: str | None = None
    mqtt_port: int = 1883
    mqtt_username: str | None = None
    mqtt_password_env: str | None = None
    jsonl: Path | None = None
    leave_after: float = 10.0
    detect_fps: float = 5.0
    crops: bool = False


def read_config(path: Path | None) -> WatchConfig:
    """The file's configuration (an empty one without a file); one line for anything wrong in it."""
    config = WatchConfig()
    if path is None:
        return config
    try:
        if path.stat().st_size > MAX_CONFIG_BYTES:
            raise InvalidArgument(f"{path.name} is over {MAX_CONFIG_BYTES >> 20} MiB: not a camera configuration")
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise InvalidArgument(f"{path.name} cannot be read ({error.strerror})") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise InvalidArgument(f"{path.name} is not valid TOML: {one_line(error, 200)}") from None
    try:
        for entry in data.get("camera", []):
            config.cameras.append(camera(str(entry["url"]), entry.get("name")))
        webhook, mqtt, jsonl, watch = (data.get(k, {}) for k in ("webhook", "mqtt", "jsonl", "watch"))
        config.webhook_url = webhook.get("url")
        config.webhook_secret_env = webhook.get("secret_env")
        config.mqtt_host, config.mqtt_port = mqtt.get("host"), int(mqtt.get("port", 1883))
        config.mqtt_username, config.mqtt_password_env = mqtt.get("username"), mqtt.get("password_env")
        config.jsonl = Path(jsonl["path"]) if jsonl.get("path") else None
        config.leave_after = float(watch.get("leave_after", config.leave_after))
        config.detect_fps = float(watch.get("detect_fps", config.detect_fps))
        config.crops = bool(watch.get("crops", False))
    except (KeyError, TypeError, ValueError, AttributeError) as error:
        raise InvalidArgument(f"{path.name}: a camera needs a url, and each section its documented keys "
                              f"({type(error).__name__}: {one_line(error, 100)})") from None
    return config


def camera(url: str, name: str | None = None, number: int = 1) -> Camera:
    """A camera from its address and name (default: camera<number>), checked; one line when it cannot be one."""
    name = name if name is not None else f"camera{number}"
    if not isinstance(name, str) or not NAME.match(name):
        raise InvalidArgument("a camera's name is 1-60 letters, digits, spaces, dots, dashes or underscores")
    if not url or any(ord(c) < 32 for c in url):
        raise InvalidArgument(f"camera {name} has no usable address ({redacted(url)})")
    return Camera(name, url)


def checked(config: WatchConfig) -> WatchConfig:
    """The whole configuration, before anything starts: cameras named once each, bounds, a sink's needs."""
    if not config.cameras:
        raise InvalidArgument("no camera to watch: name one (facerec watch rtsp://...) or write them in --config")
    if len(config.cameras) > MAX_CAMERAS:
        raise InvalidArgument(f"at most {MAX_CAMERAS} cameras are watched by one facerec watch")
    names = [c.name for c in config.cameras]
    if len(set(names)) != len(names):
        raise InvalidArgument("two cameras have the same name: give each its own (name=URL)")
    if not 0.5 <= config.leave_after <= 3600:
        raise InvalidArgument("leave_after is between 0.5 and 3600 seconds")
    if not 0.2 <= config.detect_fps <= 30:
        raise InvalidArgument("detect_fps is between 0.2 and 30 frames a second")
    if config.webhook_url and not config.webhook_secret_env:
        raise InvalidArgument("a webhook needs a shared secret: name its environment variable (--webhook-secret-env)")
    return config
