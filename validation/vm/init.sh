#!/bin/busybox sh
# The guest's /init (validation/vm/run.py packs it into the initramfs with busybox, vmtcp and
# the kernel's virtio-net and BBR modules). Parameters come from the kernel command line:
# cclab.ip (the guest's address), cclab.dst, cclab.port, cclab.cc (kernel controller name),
# cclab.secs (transfer length), cclab.wait (seconds between READY and the transfer), cclab.napi_tx
# (virtio_net's napi_tx: 1, its default, frees sent packets in NAPI on the TX interrupt; 0 frees
# them at transmit, so TCP Small Queues never waits for the device).
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sys /sys
for w in $(cat /proc/cmdline); do
    case $w in
        cclab.*=*) k=${w%%=*}; k=${k#cclab.}; eval "P_$k=\${w#*=}" ;;
    esac
done
# The modules in dependency order (run.py writes the order from their `depends=`).
for m in $(cat /lib/modules/order); do
    args=; [ $m = virtio_net ] && args="napi_tx=${P_napi_tx:-1}"
    insmod /lib/modules/$m.ko $args || echo "init: insmod $m failed"
done
ip link set lo up
ip addr add "$P_ip/16" dev eth0
ip link set eth0 up
i=0
while [ "$(cat /sys/class/net/eth0/operstate)" != up ] && [ $i -lt 50 ]; do
    sleep 0.1; i=$((i + 1))
done
# The Linux defaults a Debian guest runs with: no fq qdisc (BBR paces in TCP since 4.13).
echo "GUEST $(uname -r) cc=$P_cc $(cat /proc/sys/net/ipv4/tcp_available_congestion_control)"
echo READY
sleep "$P_wait"
/vmtcp send "$P_dst" "$P_port" "$P_cc" "$P_secs"
echo GUEST-END
poweroff -f
