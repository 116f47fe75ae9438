"""Tests of the coding tools."""
