"""Non-interactive front ends: print mode and JSON event mode."""
