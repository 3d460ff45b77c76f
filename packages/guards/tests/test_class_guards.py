"""Guards on classes: a class's dict holds the objects seen and lacks the names seen absent;
its MRO is the tuple seen. Each passes as built and fails on each single change."""

from __future__ import annotations

from guards import ClassDictMatch, GuardSet, MroMatch


def compiled(*guards):
    return GuardSet(guards).compile(parameters=["v"])


def make_classes():
    class Base:
        def method(self):
            return 1

    class Child(Base):
        pass

    class Other:
        pass

    return Base, Child, Other


def test_class_dict_match_sees_a_name_added_replaced_or_deleted():
    Base, Child, _ = make_classes()
    method = Base.__dict__["method"]
    guard = compiled(ClassDictMatch(Child, (), ("method", "__index__")), ClassDictMatch(Base, (("method", method),), ("__index__",)))
    assert guard(None)
    Child.method = lambda self: 2  # now found first in Child
    assert not guard(None)
    assert guard.why(None).startswith("'method' not in ")
    del Child.method
    assert guard(None)
    Base.method = lambda self: 3
    assert not guard(None)
    Base.method = method
    Base.__index__ = lambda self: 0
    assert not guard(None)
    del Base.__index__
    del Base.method
    assert not guard(None)  # a missing name fails the check, it does not raise


def test_mro_match_sees_bases_reassigned_on_the_class_or_an_ancestor():
    Base, Child, Other = make_classes()

    class Grandchild(Child):
        pass

    guard = compiled(MroMatch(Grandchild, Grandchild.__mro__))
    assert guard(None)
    Child.__bases__ = (Other,)
    assert not guard(None)
    assert "Child, make_classes.<locals>.Base, object) failed: got" in guard.why(None)
