"""Surveys' business logic: plain functions called by views, admin, commands and tasks."""
