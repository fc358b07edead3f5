"""A catalogue of broken agents that the shipped suite must catch (mutation testing).

Each mutant is the reference agent with one realistic bug, built only from
public names (:mod:`harness.agent`), so it keeps working while the core is
refactored. ``python -m harness.mutants`` runs the catalogue against the suite
and prints the kill matrix; see ``harness/mutants/README.md``::

    from harness.mutants import MUTANTS
    for mutant in MUTANTS:
        print(mutant.name, [k.scenario for k in mutant.kills])
"""

from harness.mutants._catalogue import MUTANTS, Kill, Mutant

__all__ = ["MUTANTS", "Kill", "Mutant"]
