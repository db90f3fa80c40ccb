#!/bin/sh
# Runs in host s0's namespace of `cclab emulate` (validation/vm/run.py starts it as a command):
# hands s0's address to a qemu guest behind a tap device and starts the guest.
#   host.sh KERNEL INITRD CONSOLE_FILE APPEND
# The namespace keeps the emulator's TUN (cclab0) for the path and routes the guest's address
# to the tap; proxy ARP answers the guest's ARP for the other hosts. The guest's console goes
# to CONSOLE_FILE, which run.py follows to start the CPU schedule at READY.
set -eu
kernel=$1 initrd=$2 console=$3 append=$4
addr=$(ip -4 -o addr show dev cclab0 | awk '{print $4}' | cut -d/ -f1)
ip addr del "$addr/16" dev cclab0
ip route add 10.77.0.0/16 dev cclab0
ip tuntap add dev vmtap0 mode tap
ip link set vmtap0 up
ip addr add 10.77.255.254/32 dev vmtap0
ip route add "$addr/32" dev vmtap0
echo 1 > /proc/sys/net/ipv4/ip_forward
echo 1 > /proc/sys/net/ipv4/conf/vmtap0/proxy_arp
echo 0 > /proc/sys/net/ipv4/conf/all/rp_filter
echo 0 > /proc/sys/net/ipv4/conf/cclab0/rp_filter
echo 0 > /proc/sys/net/ipv4/conf/vmtap0/rp_filter
exec qemu-system-x86_64 -name cclab-vm-guest,debug-threads=on -accel "${CCLAB_VM_ACCEL:-tcg}" -cpu max -smp 1 -m 256 \
    -nographic -no-reboot -nodefaults -serial "file:$console" \
    -kernel "$kernel" -initrd "$initrd" \
    -append "console=ttyS0 quiet panic=-1 no_timer_check cclab.ip=$addr $append" \
    -netdev tap,id=n0,ifname=vmtap0,script=no,downscript=no \
    -device virtio-net-pci,netdev=n0,mac=52:54:00:12:34:56
