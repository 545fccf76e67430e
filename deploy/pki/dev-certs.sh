#!/usr/bin/env bash
# Makes a development CA and a mutual-TLS certificate per unit, for compose and for trying mutual
# TLS on a laptop. Never for production: there cert-manager issues them (deploy/k8s/certificates.yaml).
#
#   deploy/pki/dev-certs.sh <out-dir> [team ...]
#
# Writes into <out-dir>: ca.pem (the CA every unit trusts) and ca.key; for each unit <unit>.pem and
# <unit>.key, whose identity is the URI SAN spiffe://pgw/unit/<unit> and whose DNS SANs are the unit's
# name (its compose and Kubernetes Service name), localhost and 127.0.0.1; for each team named,
# team-<team>.pem and team-<team>.key with identity spiffe://pgw/team/<team> (an internal team's
# client: read-only methods unless RPC_TEAM_GRANTS grants more). An existing CA in <out-dir> is kept
# (unless it expires within a day), so certificates made later trust the same one. Needs openssl.
set -euo pipefail

if [ $# -lt 1 ]; then
  echo "usage: $0 <out-dir> [team ...]" >&2
  exit 2
fi
out=$1
shift
UNITS="gateway operations routing ledger receipts notifier"
DAYS=${DEV_CERT_DAYS:-365}
mkdir -p "$out"
cd "$out"

# A CA that expires within a day is replaced: certificates it signed would soon be refused.
if [ ! -f ca.pem ] || [ ! -f ca.key ] || ! openssl x509 -in ca.pem -noout -checkend 86400 >/dev/null; then
  openssl req -x509 -newkey rsa:2048 -nodes -days "$DAYS" -subj "/CN=pgw development CA" \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" \
    -keyout ca.key -out ca.pem 2>/dev/null
fi

# issue <file base> <common name> <subjectAltName>
issue() {
  local ext
  ext=$(mktemp)
  printf 'subjectAltName=%s\nextendedKeyUsage=serverAuth,clientAuth\nkeyUsage=critical,digitalSignature,keyEncipherment\n' "$3" >"$ext"
  openssl req -newkey rsa:2048 -nodes -subj "/CN=$2" -keyout "$1.key" -out "$1.csr" 2>/dev/null
  openssl x509 -req -in "$1.csr" -CA ca.pem -CAkey ca.key -CAcreateserial -days "$DAYS" -extfile "$ext" -out "$1.pem" 2>/dev/null
  rm -f "$1.csr" "$ext"
}

for unit in $UNITS; do
  issue "$unit" "$unit" "URI:spiffe://pgw/unit/$unit,DNS:$unit,DNS:localhost,IP:127.0.0.1"
done
for team in "$@"; do
  case $team in
    *[!a-z0-9-]* | "") echo "team names are lowercase letters, digits and '-': $team" >&2; exit 2 ;;
  esac
  issue "team-$team" "team $team" "URI:spiffe://pgw/team/$team"
done
# Containers run as a non-root user that must read its key (development material only); the CA's
# key stays readable by its owner alone.
chmod 644 ./*.pem ./*.key
chmod 600 ca.key
echo "development CA and certificates in $out"
