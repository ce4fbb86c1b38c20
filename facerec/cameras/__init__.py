"""Cameras watched (`facerec watch`, #67): a stream's newest frames, each face's track decided once, one event per
person per visit, handed to webhooks, MQTT (Home Assistant) and JSON Lines without ever waiting on them."""
