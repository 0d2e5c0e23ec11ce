#!/usr/bin/env bash
# Starts a single-node Slurm on localhost from .ci/slurm/slurm.conf: munged,
# slurmctld and slurmd, as root, then waits for the node to be idle. It
# expects slurm-wlm and munge installed (apt-get install slurm-wlm munge).
# Run it again and it restarts them.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"

install -d -m 0755 /etc/slurm
install -m 0644 "$here/slurm.conf" /etc/slurm/slurm.conf
install -d -m 0755 /var/spool/slurmctld /var/spool/slurmd

# munge: a key (1024 random bytes, the munge user's, 0400) and its run
# directory; munged runs as the munge user.
install -d -o munge -g munge -m 0700 /etc/munge /var/lib/munge /var/log/munge
install -d -o munge -g munge -m 0755 /run/munge
if [ ! -s /etc/munge/munge.key ]; then
  dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 status=none
fi
chown munge:munge /etc/munge/munge.key
chmod 0400 /etc/munge/munge.key

stop() { # stop PIDFILE: ends the daemon it names, if running
  local pid
  pid=$(cat "$1" 2>/dev/null || true)
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
    kill "$pid"
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  fi
}
stop /run/slurmd.pid
stop /run/slurmctld.pid
stop /run/munge/munged.pid

runuser -u munge -- /usr/sbin/munged
for _ in $(seq 50); do munge -n | unmunge >/dev/null 2>&1 && break; sleep 0.1; done
munge -n | unmunge >/dev/null

/usr/sbin/slurmctld
/usr/sbin/slurmd -N localhost

for _ in $(seq 60); do
  state=$(sinfo -h -N -n localhost -o %t 2>/dev/null || true)
  case "$state" in
    idle*) echo "slurm: node localhost idle"; exit 0 ;;
  esac
  sleep 0.5
done
echo "slurm: node localhost not idle after 30s (state: ${state:-none})" >&2
tail -n 20 /var/log/slurmctld.log /var/log/slurmd.log >&2 || true
exit 1
