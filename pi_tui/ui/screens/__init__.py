"""Modal screens: help, pickers, text input, confirmation."""
