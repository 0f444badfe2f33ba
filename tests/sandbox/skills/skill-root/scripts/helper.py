"""A module of the skill, imported by its package path like skill-creator's quick_validate."""


def say(word):
    return f"helper says {word}"
