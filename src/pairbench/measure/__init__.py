"""Measuring commands: executors (real and fake), sampling plans and stopping rules."""
