"""Helpers shared by the test modules: no tests here."""
