"""`facerec watch CAMERA...`: RTSP, HTTP (MJPEG) cameras, a local device or a file watched, one event per person
per visit sent to a webhook, MQTT (Home Assistant) and a JSON Lines file (#67). Runs until Ctrl-C or SIGTERM (a
file played once: until its end; `--seconds`: that long); the app's page shows how the cameras stand from the
status file it writes under the gallery's home. What it prints of a camera is its address without secrets."""

from __future__ import annotations

import argparse
import signal
import threading
import time
from pathlib import Path

from facerec.cameras.config import NAME, camera, checked, read_config
from facerec.cameras.mqtt_sink import MqttSink
from facerec.cameras.sinks import JsonLinesSink, WebhookSink
from facerec.cameras.source import CameraSource
from facerec.cameras.status_file import EVERY_S, write_status
from facerec.cameras.watcher import CameraWatcher
from facerec.cli.output import emit, open_gallery
from facerec.settings import named_secret


def register(command, sub, common: argparse.ArgumentParser) -> None:
    p = command("watch", cmd_watch, "watch cameras (RTSP, HTTP MJPEG, a device, a file): one event per person per "
                "visit, to a webhook, MQTT (Home Assistant discovery) and/or a JSON Lines file")
    p.add_argument("cameras", nargs="*", metavar="CAMERA", help="[NAME=]URL: rtsp://..., http://..., /dev/video0, "
                                                                "or a video file")
    p.add_argument("--config", help="a TOML file of cameras and sinks (docs/cameras.md)")
    p.add_argument("--jsonl", help="append each event as a line of JSON to this file")
    p.add_argument("--webhook", help="POST each event as JSON to this URL, signed (X-Facerec-Signature)")
    p.add_argument("--webhook-secret-env", help="the environment variable holding the webhook's shared secret")
    p.add_argument("--mqtt", metavar="HOST[:PORT]", help="publish events to this MQTT broker, with Home Assistant "
                                                        "discovery (a sensor per person)")
    p.add_argument("--mqtt-username")
    p.add_argument("--mqtt-password-env", help="the environment variable holding the broker's password")
    p.add_argument("--leave-after", type=float, help="seconds without a person's face before they left (10)")
    p.add_argument("--detect-fps", type=float, help="frames a second recognition takes from each camera (5)")
    p.add_argument("--crops", action="store_true", default=None,
                   help="send an enrolled person's best face with their events (an unknown person's only with "
                        "FACEREC_SUGGESTIONS=on, never in privacy mode)")
    p.add_argument("--loop", action="store_true", help="play a video file again and again (tests, demos)")
    p.add_argument("--seconds", type=float, help="stop after this long")


def cmd_watch(args) -> int:
    config = read_config(Path(args.config) if args.config else None)
    for number, spec in enumerate(args.cameras, len(config.cameras) + 1):
        prefix, _, rest = spec.partition("=")
        named = bool(rest) and "://" not in prefix and NAME.match(prefix) and not prefix.startswith("/")
        config.cameras.append(camera(rest if named else spec, prefix if named else None, number))
    for field, value in (("jsonl", Path(args.jsonl) if args.jsonl else None), ("webhook_url", args.webhook),
                         ("webhook_secret_env", args.webhook_secret_env), ("mqtt_username", args.mqtt_username),
                         ("mqtt_password_env", args.mqtt_password_env), ("leave_after", args.leave_after),
                         ("detect_fps", args.detect_fps), ("crops", args.crops)):
        if value is not None:
            setattr(config, field, value)
    if args.mqtt:
        host, _, port = args.mqtt.partition(":")
        config.mqtt_host, config.mqtt_port = host, int(port) if port.isdigit() else 1883
    checked(config)
    with open_gallery(args) as gallery:
        services = gallery.services()
        settings = services.settings
        sinks = _sinks(config, [person.name for person in gallery.people()])
        crops_unknown = config.crops and settings.suggestions is True and settings.store_crops
        watchers = [CameraWatcher(c.name, CameraSource(c.url, loop=args.loop), services.video.camera, sinks,
                                  config.leave_after, config.detect_fps, config.crops, crops_unknown)
                    for c in config.cameras]
        stop = threading.Event()
        previous = signal.signal(signal.SIGTERM, lambda *_: stop.set())
        started = time.monotonic()
        try:
            for watcher in watchers:
                watcher.start()
            while not stop.is_set() and any(w.running for w in watchers):
                if args.seconds is not None and time.monotonic() - started >= args.seconds:
                    break
                write_status(settings.home, [w.status() for w in watchers], [s.status() for s in sinks])
                stop.wait(EVERY_S)
        except KeyboardInterrupt:
            pass
        finally:
            signal.signal(signal.SIGTERM, previous)
            for watcher in watchers:
                watcher.stop()
            for sink in sinks:
                sink.stop()
            write_status(settings.home, [w.status() for w in watchers], [s.status() for s in sinks], running=False)
    cameras = [{**w.status(), "latencies_s": [round(v, 3) for v in w.latencies]} for w in watchers]
    emit(args, {"cameras": cameras, "sinks": [s.status() for s in sinks]},
         [[c["camera"], c["url"], c["state"], c["frames_processed"], c["frames_dropped"], c["reconnects"],
           len([e for e in c["recent_events"] if e["event"] == "arrived"])] for c in cameras],
         ["camera", "address", "state", "processed", "dropped", "reconnects", "recent arrivals"])
    return 0


def _sinks(config, people: list[str]) -> list:
    sinks = []
    if config.jsonl:
        sinks.append(JsonLinesSink(config.jsonl))
    if config.webhook_url:
        secret = named_secret(config.webhook_secret_env, "the webhook's shared secret").encode()
        sinks.append(WebhookSink(config.webhook_url, secret))
    if config.mqtt_host:
        password = named_secret(config.mqtt_password_env, "the broker's password") if config.mqtt_password_env \
            else None
        sinks.append(MqttSink(config.mqtt_host, config.mqtt_port, people, config.mqtt_username, password))
    return [sink.start() for sink in sinks]
