"""Certificates for the secure two-host link: a CA, host certificates, revocation (lerobot_ros.secure.certs).

lerobot-ros certs init                                    # a CA in ~/.config/lerobot_ros/certs
lerobot-ros certs issue robot --address 192.168.1.10      # then copy ca.pem, crl.pem, hosts/robot.* to it
lerobot-ros certs issue policy --address 192.168.1.20
lerobot-ros certs revoke robot                            # copy the new crl.pem to every host
lerobot-ros certs list
"""

from __future__ import annotations

import argparse

from lerobot_ros.secure.config import DEFAULT_CERTS_DIR


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", choices=["init", "issue", "revoke", "list"], help="what to do")
    parser.add_argument("name", nargs="?", default="", help="issue / revoke: the host's certificate name")
    parser.add_argument("--certs_dir", default=DEFAULT_CERTS_DIR, help="the CA's folder")
    parser.add_argument(
        "--address", action="append", default=[], help="issue: an IP address or DNS name of the host (repeatable)"
    )
    parser.add_argument("--days", type=int, default=None, help="validity in days (CA 3650, host 365)")


def run(args: argparse.Namespace) -> int:
    from lerobot_ros.conventions.errors import UserError
    from lerobot_ros.secure import certs

    if args.action in ("issue", "revoke") and not args.name:
        raise UserError(f"certs {args.action} needs the host's name: lerobot-ros certs {args.action} NAME")
    if args.action == "init":
        root = certs.init_ca(args.certs_dir, days=args.days or 3650)
        print(f"CA created in {root}: ca.pem, ca.key (keep it on this machine only), crl.pem")
    elif args.action == "issue":
        files = certs.issue(args.certs_dir, args.name, args.address, days=args.days or 365)
        print(
            f"issued {files.cert} for {args.name} {args.address or ''}\n"
            f"copy to that host's certs folder: {files.ca.name}, {files.crl.name}, "
            f"{files.cert.relative_to(files.ca.parent)}, {files.key.relative_to(files.ca.parent)} (keep the key 0600)"
        )
    elif args.action == "revoke":
        serial = certs.revoke(args.certs_dir, args.name)
        print(f"revoked {args.name} (serial {serial:x}); copy the new crl.pem to every host")
    else:
        rows = certs.listing(args.certs_dir)
        print(f"{'name':16} {'serial':>16} {'valid until':12} {'revoked':8} names")
        for c in rows:
            print(
                f"{c.name:16} {c.serial:>16x} {c.not_after:%Y-%m-%d}   {'yes' if c.revoked else 'no':8} {', '.join(c.names)}"
            )
    return 0
