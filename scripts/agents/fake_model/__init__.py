"""Scripted fake model for offline agent runs; see server.py."""
