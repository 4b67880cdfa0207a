"""The current ABI as a binary built against an older header sees it.

Usage: abi_view.py BASELINE.xml CURRENT.xml OUT.xml [FORWARDED]

Reads two abidw records of the probe library (abi_probe.c) and writes
CURRENT with, in every struct that BASELINE also has, the members appended
after BASELINE's last member removed and the size set back to BASELINE's.
Appending is the one change plugin_api.h allows to a released struct
("Rules of the structs"), so `abidiff BASELINE OUT` must then find nothing:
any difference left (a member inserted, removed, retyped or moved, a struct
shrunk, an enumerator changed, a callback's signature changed) is an ABI
break.

FORWARDED (comma-separated FxApi member names) is for the first release of
version 1 only: entries the host serves at BASELINE's offsets through its
forwarders (host/capi/first_release_forwarding.cc). They are moved
back to BASELINE's offsets, and whatever the current table has at those
offsets is what the forwarders also serve, so it leaves the view. Any other
difference still shows.
"""
import sys
import xml.etree.ElementTree as ET


def structs(root):
    return {c.get("name"): c for c in root.iter("class-decl")
            if c.get("name") and c.find("data-member") is not None}


def offset(member):
    return int(member.get("layout-offset-in-bits"))


def name(member):
    return member.find("var-decl").get("name")


def forward(old, new, forwarded):
    """Moves `forwarded` members of `new` to their offsets in `old`."""
    old_offsets = {name(m): offset(m) for m in old.findall("data-member")}
    slots = {old_offsets[n] for n in forwarded}
    for m in list(new.findall("data-member")):
        if name(m) in forwarded:
            m.set("layout-offset-in-bits", str(old_offsets[name(m)]))
        elif offset(m) in slots:
            new.remove(m)
    members = sorted(new.findall("data-member"), key=offset)
    for m in members:
        new.remove(m)
    for m in members:
        new.append(m)


def trim(old, new):
    """Drops the members `new` appended to `old`; sizes it as `old`."""
    old_names = {name(m) for m in old.findall("data-member")}
    last = max(offset(m) for m in old.findall("data-member"))
    for m in new.findall("data-member"):
        if name(m) not in old_names and offset(m) > last:
            new.remove(m)
    new.set("size-in-bits", old.get("size-in-bits"))


def main(baseline, current, out, forwarded=""):
    old = structs(ET.parse(baseline).getroot())
    tree = ET.parse(current)
    for struct_name, new in structs(tree.getroot()).items():
        if struct_name not in old:
            continue
        if struct_name == "FxApi" and forwarded:
            forward(old[struct_name], new, forwarded.split(","))
        trim(old[struct_name], new)
    tree.write(out)


if __name__ == "__main__":
    main(*sys.argv[1:])
