"""A small certificate authority for the secure two-host link: create it, issue and revoke host certificates,
and check a host's files before the link starts (never a silent fall-back to an open link).

Everything cryptographic is the `cryptography` library's; keys are EC P-256, certificates X.509 v3 with the
host's names and addresses as subjectAltName, revocation a CRL signed by the CA. The folder:

    ca.pem  ca.key (0600; only on the machine that issues)  crl.pem
    hosts/<name>.pem  hosts/<name>.key (0600)

A host gets `ca.pem`, `crl.pem` and its own `hosts/<name>.{pem,key}` (`lerobot-ros certs issue` says which).
"""

from __future__ import annotations

import datetime as dt
import ipaddress
import os
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from lerobot_ros.conventions.errors import UserError

CA_CERT, CA_KEY, CRL = "ca.pem", "ca.key", "crl.pem"
HOSTS = "hosts"
KEY_MODE = 0o600


class CertificateError(UserError, RuntimeError):
    """A certificate or key that cannot be used: the link refuses to start (one line, what to do)."""


@dataclass(frozen=True)
class HostFiles:
    """The files one host needs for the link."""

    ca: Path
    crl: Path
    cert: Path
    key: Path

    @classmethod
    def in_folder(cls, folder: str | os.PathLike[str], name: str) -> HostFiles:
        root = Path(folder).expanduser()
        return cls(root / CA_CERT, root / CRL, root / HOSTS / f"{name}.pem", root / HOSTS / f"{name}.key")


@dataclass(frozen=True)
class IssuedCert:
    name: str
    serial: int
    not_after: dt.datetime
    revoked: bool
    names: tuple[str, ...]


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def _write_private(path: Path, data: bytes) -> None:
    """A key file that is never readable by others, not even for a moment (created 0600)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, KEY_MODE)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


def _write_public(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def _key_pem(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


def _read(path: Path, what: str) -> bytes:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise CertificateError(f"{what} {path} does not exist") from None
    except OSError as exc:
        raise CertificateError(f"{what} {path} cannot be read ({exc.strerror})") from None


def _load_cert(path: Path, what: str) -> x509.Certificate:
    try:
        return x509.load_pem_x509_certificate(_read(path, what))
    except ValueError:
        raise CertificateError(f"{what} {path} is not a PEM certificate") from None


def _load_key(path: Path, what: str) -> ec.EllipticCurvePrivateKey:
    data = _read(path, what)
    mode = path.stat().st_mode & 0o777
    if mode & 0o077:
        raise CertificateError(f"{what} {path} is readable by others (mode {mode:o}): chmod 600 {path}")
    try:
        key = serialization.load_pem_private_key(data, password=None)
    except (ValueError, TypeError):
        raise CertificateError(f"{what} {path} is not an unencrypted PEM private key") from None
    if not isinstance(key, ec.EllipticCurvePrivateKey):
        raise CertificateError(f"{what} {path} is not an EC key")
    return key


def _load_crl(path: Path) -> x509.CertificateRevocationList:
    try:
        return x509.load_pem_x509_crl(_read(path, "the revocation list"))
    except ValueError:
        raise CertificateError(f"the revocation list {path} is not a PEM CRL") from None


def _sign_crl(ca_cert: x509.Certificate, ca_key, revoked: list[x509.RevokedCertificate], days: int) -> bytes:
    builder = (
        x509.CertificateRevocationListBuilder()
        .issuer_name(ca_cert.subject)
        .last_update(_now() - dt.timedelta(minutes=5))
        .next_update(_now() + dt.timedelta(days=days))
    )
    for entry in revoked:
        builder = builder.add_revoked_certificate(entry)
    return builder.sign(ca_key, hashes.SHA256()).public_bytes(serialization.Encoding.PEM)


def init_ca(folder: str | os.PathLike[str], name: str = "lerobot_ros CA", days: int = 3650) -> Path:
    """A new CA in `folder` (refuses to overwrite one): its certificate, key (0600) and an empty CRL."""
    root = Path(folder).expanduser()
    if (root / CA_KEY).exists() or (root / CA_CERT).exists():
        raise CertificateError(f"{root} already holds a CA ({CA_CERT}); use another folder or remove it first")
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    cert = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(_now() - dt.timedelta(minutes=5))
        .not_valid_after(_now() + dt.timedelta(days=days))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(False, False, False, False, False, True, True, False, False), critical=True
        )  # keyCertSign, cRLSign
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .sign(key, hashes.SHA256())
    )
    _write_private(root / CA_KEY, _key_pem(key))
    _write_public(root / CA_CERT, cert.public_bytes(serialization.Encoding.PEM))
    _write_public(root / CRL, _sign_crl(cert, key, [], days=days))
    return root


def _ca(root: Path) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
    return _load_cert(root / CA_CERT, "the CA certificate"), _load_key(root / CA_KEY, "the CA key")


def _alt_names(names: list[str]) -> list[x509.GeneralName]:
    out: list[x509.GeneralName] = []
    for n in names:
        try:
            out.append(x509.IPAddress(ipaddress.ip_address(n)))
        except ValueError:
            out.append(x509.DNSName(n))
    return out


def issue(
    folder: str | os.PathLike[str], name: str, addresses: list[str] | tuple[str, ...] = (), days: int = 365
) -> HostFiles:
    """A certificate for host `name` (usable as TLS server and client), valid for its name and `addresses`."""
    root = Path(folder).expanduser()
    if not name or "/" in name or name.startswith("."):
        raise CertificateError(f"host name {name!r}: use letters, digits, '-', '_' or '.' (no '/')")
    ca_cert, ca_key = _ca(root)
    files = HostFiles.in_folder(root, name)
    if files.cert.exists():
        raise CertificateError(f"{files.cert} exists: revoke it first (lerobot-ros certs revoke {name})")
    key = ec.generate_private_key(ec.SECP256R1())
    names = [name, *[a for a in addresses if a != name]]
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)]))
        .issuer_name(ca_cert.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(_now() - dt.timedelta(minutes=5))
        .not_valid_after(min(_now() + dt.timedelta(days=days), ca_cert.not_valid_after_utc))
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.SubjectAlternativeName(_alt_names(names)), critical=False)
        .add_extension(
            x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH]), critical=False
        )
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    _write_private(files.key, _key_pem(key))
    _write_public(files.cert, cert.public_bytes(serialization.Encoding.PEM))
    return files


def host_folder(folder: str | os.PathLike[str], name: str, dest: str | os.PathLike[str]) -> HostFiles:
    """What an operator copies to host `name`, into `dest`: ca.pem, crl.pem and hosts/<name>.pem/.key (the key
    created 0600 there too). Returns the files at `dest`."""
    src, out = HostFiles.in_folder(folder, name), HostFiles.in_folder(dest, name)
    for a, b in ((src.ca, out.ca), (src.crl, out.crl), (src.cert, out.cert)):
        _write_public(b, _read(a, "the file"))
    _write_private(out.key, _read(src.key, f"host {name}'s key"))
    return out


def revoke(folder: str | os.PathLike[str], name: str) -> int:
    """Put host `name`'s certificate on the CRL (and move its files aside); returns its serial. Copy the new
    crl.pem to every host: a link checks it at each connection."""
    root = Path(folder).expanduser()
    ca_cert, ca_key = _ca(root)
    files = HostFiles.in_folder(root, name)
    cert = _load_cert(files.cert, f"host {name}'s certificate")
    crl = _load_crl(root / CRL)
    entries = list(crl)
    if not any(e.serial_number == cert.serial_number for e in entries):
        entries.append(
            x509.RevokedCertificateBuilder()
            .serial_number(cert.serial_number)
            .revocation_date(_now() - dt.timedelta(seconds=1))
            .build()
        )
    _write_public(root / CRL, _sign_crl(ca_cert, ca_key, entries, days=3650))
    stamp = f"{cert.serial_number:x}"
    for path in (files.cert, files.key):
        path.replace(path.with_name(f"{path.stem}.revoked-{stamp}{path.suffix}"))
    return cert.serial_number


def listing(folder: str | os.PathLike[str]) -> list[IssuedCert]:
    root = Path(folder).expanduser()
    revoked = {e.serial_number for e in _load_crl(root / CRL)}
    out = []
    for path in sorted((root / HOSTS).glob("*.pem")):
        cert = _load_cert(path, "certificate")
        san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
        names = tuple(str(v) for v in san.get_values_for_type(x509.DNSName)) + tuple(
            str(v) for v in san.get_values_for_type(x509.IPAddress)
        )
        name = path.name.split(".revoked-")[0].removesuffix(".pem")
        out.append(IssuedCert(name, cert.serial_number, cert.not_valid_after_utc, cert.serial_number in revoked, names))
    return out


def check_host_files(files: HostFiles, now: dt.datetime | None = None) -> x509.Certificate:
    """Everything a link checks before it starts: each file there and readable, the key private (0600) and
    matching the certificate, the certificate signed by the CA, within its validity and not revoked, the CRL
    signed by the CA and current. Returns the host's certificate; raises CertificateError (one line)."""
    now = now or _now()
    ca = _load_cert(files.ca, "the CA certificate")
    cert = _load_cert(files.cert, "the host certificate")
    key = _load_key(files.key, "the host key")
    crl = _load_crl(files.crl)
    if key.public_key().public_numbers() != cert.public_key().public_numbers():  # type: ignore[union-attr]
        raise CertificateError(f"the host key {files.key} does not belong to the certificate {files.cert}")
    for what, obj in (("the CA certificate", ca), ("the host certificate", cert)):
        if now < obj.not_valid_before_utc:
            raise CertificateError(f"{what} is not valid before {obj.not_valid_before_utc:%Y-%m-%d %H:%M} UTC")
        if now > obj.not_valid_after_utc:
            raise CertificateError(
                f"{what} expired on {obj.not_valid_after_utc:%Y-%m-%d} (issue a new one: lerobot-ros certs issue)"
            )
    try:
        cert.verify_directly_issued_by(ca)
    except (ValueError, TypeError, InvalidSignature):
        raise CertificateError(
            f"the host certificate {files.cert} was not issued by the CA {files.ca} (a foreign certificate)"
        ) from None
    if not crl.is_signature_valid(ca.public_key()):  # type: ignore[arg-type]
        raise CertificateError(f"the revocation list {files.crl} is not signed by the CA {files.ca}")
    if crl.next_update_utc is not None and now > crl.next_update_utc:
        raise CertificateError(f"the revocation list {files.crl} is out of date (copy the CA's current crl.pem)")
    if crl.get_revoked_certificate_by_serial_number(cert.serial_number) is not None:
        raise CertificateError(f"the host certificate {files.cert} is revoked (serial {cert.serial_number:x})")
    return cert
