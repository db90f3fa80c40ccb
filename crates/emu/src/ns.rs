//! Hosts: network namespaces held by threads of this process, each attached by a TUN device.
//!
//! Contract: [`Host::new`] starts a thread that moves into a fresh, unnamed network namespace
//! (`unshare(CLONE_NEWNET)`), creates the TUN device `cclab0` there, gives it the host's
//! address in `10.77.0.0/16` and brings it and the loopback up. The namespace lives exactly as
//! long as something uses it: the thread, the sockets opened in it and the commands started in
//! it. Programs start from the host's thread (so they inherit its namespace) under `setpriv
//! --pdeathsig KILL`, so they die with the thread that started them; the TUN device dies with
//! its file descriptor. A scenario's command ([`Host::spawn_command`]) may fork, daemonise or
//! leave its process group, so it also gets a PID namespace of its own (`unshare --pid --fork
//! --kill-child`), whose init is killed with the command's `unshare` and takes every process of
//! the namespace with it (`pid_namespaces(7)`): neither the end of the run nor a kill of this
//! process leaves a program of a command running. Nothing is named in the root namespace, so
//! neither a crash nor a kill of this process can leave an interface, a namespace or a process
//! behind.
//!
//! [`check_privileges`] says what is missing (root or `CAP_NET_ADMIN`, `/dev/net/tun`, the
//! `ip`, `ss`, `tc`, `ping`, `setpriv` and `unshare` commands) before anything is set up.

use std::io;
use std::net::Ipv4Addr;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::thread::JoinHandle;

use nix::sched::CloneFlags;

/// Name of every host's TUN device (inside its own namespace, so they never clash).
pub const TUN_NAME: &str = "cclab0";

/// MTU of the TUN devices: Ethernet's 1500 bytes, as the simulator's hosts use.
pub const MTU: u16 = 1500;

/// The address of host `index`: `10.77.0.0/16` counted from `10.77.0.1`.
#[must_use]
pub fn host_addr(index: u16) -> Ipv4Addr {
    Ipv4Addr::from(u32::from(Ipv4Addr::new(10, 77, 0, 0)) + u32::from(index) + 1)
}

/// The host index of an address of [`host_addr`], if it is one.
#[must_use]
pub fn host_of(addr: [u8; 4]) -> Option<u16> {
    let a = u32::from(Ipv4Addr::from(addr));
    let base = u32::from(Ipv4Addr::new(10, 77, 0, 0));
    a.checked_sub(base + 1)
        .and_then(|i| u16::try_from(i).ok())
        .filter(|&i| i < u16::MAX)
}

/// Why the emulator cannot run here, or what failed while setting up.
#[derive(Debug, thiserror::Error)]
pub enum NsError {
    /// A precondition is missing.
    #[error("the emulator cannot run here: {0}")]
    Missing(String),
    /// A system call or command failed.
    #[error("{what}: {err}")]
    Io {
        /// What was being done.
        what: String,
        /// The error.
        err: io::Error,
    },
}

fn io_err(what: impl Into<String>) -> impl FnOnce(io::Error) -> NsError {
    let what = what.into();
    move |err| NsError::Io { what, err }
}

/// A command found on `PATH` or in the system directories (`ip` lives in `/usr/sbin`, which a
/// user's `PATH` may lack).
#[must_use]
pub fn find_command(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/sbin", "/sbin", "/usr/bin", "/bin"].map(PathBuf::from))
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// Whether this process may create namespaces and TUN devices: root or `CAP_NET_ADMIN`
/// (bit 12 of the effective set, `include/uapi/linux/capability.h`) and `CAP_SYS_ADMIN` (bit
/// 21, for `unshare(CLONE_NEWNET)` and `CLONE_NEWPID`), `/dev/net/tun`, and the `ip`, `ss`,
/// `tc`, `ping`, `setpriv` and `unshare` commands; then one host is made and dropped, to be
/// sure.
///
/// # Errors
/// [`NsError::Missing`] naming each missing piece and how to get it.
pub fn check_privileges() -> Result<(), NsError> {
    let mut missing = Vec::new();
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let cap_eff = status
        .lines()
        .find_map(|l| l.strip_prefix("CapEff:"))
        .and_then(|v| u64::from_str_radix(v.trim(), 16).ok())
        .unwrap_or(0);
    if cap_eff & (1 << 12) == 0 || cap_eff & (1 << 21) == 0 {
        missing.push(
            "root (or CAP_NET_ADMIN and CAP_SYS_ADMIN): run with sudo, or \
             `sudo setcap cap_net_admin,cap_sys_admin+ep` on the binary"
                .to_owned(),
        );
    }
    if !Path::new("/dev/net/tun").exists() {
        missing.push(
            "/dev/net/tun (load the tun module: `modprobe tun`; in a container, pass the \
             device in, e.g. `--device /dev/net/tun`)"
                .to_owned(),
        );
    }
    for (cmd, package) in [
        ("ip", "iproute2"),
        ("ss", "iproute2"),
        ("tc", "iproute2"),
        ("ping", "iputils-ping"),
        ("setpriv", "util-linux"),
        ("unshare", "util-linux"),
    ] {
        if find_command(cmd).is_none() {
            missing.push(format!("the `{cmd}` command (package {package})"));
        }
    }
    if !missing.is_empty() {
        return Err(NsError::Missing(missing.join("; ")));
    }
    // Capabilities can be present and still not enough (a seccomp filter, a read-only /proc/sys,
    // a kernel without network namespaces): make one host and drop it.
    Host::new("probe", 0).map(drop).map_err(|e| {
        NsError::Missing(format!(
            "a test host could not be set up ({e}); a container needs --privileged or \
             CAP_NET_ADMIN and CAP_SYS_ADMIN with /dev/net/tun"
        ))
    })
}

type Job = Box<dyn FnOnce() + Send>;

/// A host: a thread in its own network namespace, which runs what it is given there.
#[derive(Debug)]
pub struct Host {
    /// The scenario's name of the host.
    pub name: String,
    /// Its index among the scenario's hosts.
    pub index: u16,
    /// Its address.
    pub addr: Ipv4Addr,
    /// The inode of its namespace (`/proc/<pid>/task/<tid>/ns/net`), to check that it is gone.
    pub ns_inode: u64,
    jobs: Option<mpsc::Sender<Job>>,
    thread: Option<JoinHandle<()>>,
}

/// Run `program args` from the calling thread and fail with its standard error if it fails.
///
/// # Errors
/// [`NsError::Io`] if it cannot start or exits unsuccessfully.
pub fn run(program: &str, args: &[&str]) -> Result<String, NsError> {
    let what = format!("{program} {}", args.join(" "));
    let path = find_command(program).unwrap_or_else(|| PathBuf::from(program));
    let out = Command::new(path)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(io_err(what.clone()))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(NsError::Io {
            what,
            err: io::Error::other(String::from_utf8_lossy(&out.stderr).trim().to_owned()),
        })
    }
}

impl Host {
    /// Start host `index` called `name`: its namespace, TUN device and address. Returns the
    /// host and its TUN device (non-blocking), which the forwarder reads and writes.
    ///
    /// # Errors
    /// [`NsError`] if the namespace or the device cannot be made.
    pub fn new(name: &str, index: u16) -> Result<(Host, tun_rs::SyncDevice), NsError> {
        let (jobs, rx) = mpsc::channel::<Job>();
        let (ready_tx, ready_rx) = mpsc::channel();
        let addr = host_addr(index);
        let thread = std::thread::Builder::new()
            .name(format!("host-{name}"))
            .spawn(move || {
                let setup = || -> Result<(tun_rs::SyncDevice, u64), NsError> {
                    nix::sched::unshare(CloneFlags::CLONE_NEWNET).map_err(|e| NsError::Io {
                        what: "unshare(CLONE_NEWNET)".into(),
                        err: e.into(),
                    })?;
                    let dev = tun_rs::DeviceBuilder::new()
                        .name(TUN_NAME)
                        .mtu(MTU)
                        .build_sync()
                        .map_err(io_err("creating the TUN device"))?;
                    dev.set_nonblocking(true)
                        .map_err(io_err("making the TUN device non-blocking"))?;
                    run("ip", &["link", "set", "lo", "up"])?;
                    run(
                        "ip",
                        &["addr", "add", &format!("{addr}/16"), "dev", TUN_NAME],
                    )?;
                    run("ip", &["link", "set", TUN_NAME, "up"])?;
                    // No IPv6 on the TUN: router solicitations and DAD would be noise on
                    // the emulated path (the emulator forwards IPv4 only).
                    let _ = std::fs::write("/proc/sys/net/ipv6/conf/all/disable_ipv6", "1");
                    let inode = std::fs::metadata("/proc/thread-self/ns/net")
                        .map_err(io_err("reading the namespace's inode"))?
                        .ino();
                    Ok((dev, inode))
                };
                let ready = setup();
                let ok = ready.is_ok();
                let _ = ready_tx.send(ready);
                if ok {
                    while let Ok(job) = rx.recv() {
                        job();
                    }
                }
            })
            .map_err(io_err("starting a host thread"))?;
        let (dev, ns_inode) = ready_rx
            .recv()
            .map_err(|_| NsError::Missing("a host thread ended while setting up".into()))??;
        Ok((
            Host {
                name: name.to_owned(),
                index,
                addr,
                ns_inode,
                jobs: Some(jobs),
                thread: Some(thread),
            },
            dev,
        ))
    }

    /// Run `f` on the host's thread, inside its namespace, and return what it returns.
    ///
    /// # Panics
    /// If the host's thread has ended (a job panicked).
    pub fn run<T: Send + 'static>(&self, f: impl FnOnce() -> T + Send + 'static) -> T {
        let (tx, rx) = mpsc::sync_channel(1);
        let job: Job = Box::new(move || {
            let _ = tx.send(f());
        });
        self.jobs
            .as_ref()
            .expect("jobs are open until drop")
            .send(job)
            .expect("the host thread runs until the host is dropped");
        rx.recv().expect("the host thread ran the job")
    }

    /// Start `program args` inside the host's namespace, killed when the host's thread ends
    /// (`setpriv --pdeathsig KILL`); its output goes to `stdout` and `stderr`.
    ///
    /// # Errors
    /// [`NsError::Io`] if it cannot start.
    pub fn spawn(
        &self,
        program: &str,
        args: &[String],
        stdout: Stdio,
        stderr: Stdio,
    ) -> Result<Child, NsError> {
        let setpriv = find_command("setpriv").unwrap_or_else(|| PathBuf::from("setpriv"));
        let program_path = find_command(program).unwrap_or_else(|| PathBuf::from(program));
        let args = args.to_vec();
        let what = format!("starting `{program}` on host {}", self.name);
        self.run(move || {
            Command::new(setpriv)
                .arg("--pdeathsig")
                .arg("KILL")
                .arg("--")
                .arg(program_path)
                .args(args)
                .stdin(Stdio::null())
                .stdout(stdout)
                .stderr(stderr)
                .spawn()
        })
        .map_err(io_err(what))
    }

    /// Start the command `argv` inside the host's network namespace and in a PID namespace of
    /// its own, in a process group of its own, with `cwd` as its working directory and its
    /// standard output and error piped (`Child::stdout`, `Child::stderr`).
    ///
    /// The process started is `unshare`, which forks the namespace's init: a shell that runs
    /// `argv` in the background and waits for it (`"$@" & wait $!`), so that the command is
    /// never the init (an init ignores every signal it has no handler for, `pid_namespaces(7)`,
    /// and would not stop on [`SIGTERM`](nix::sys::signal::Signal::SIGTERM)). The exit status
    /// of `unshare` is the command's. Stopping it: `SIGTERM` to the process group (see
    /// [`stop_command`]), which `unshare` and the init ignore, and which ends a program that
    /// stayed in the group; then the init ends, and with it every process of the namespace.
    /// `SIGKILL` to `unshare`, or the end of the host's thread, kills the init (`--kill-child`),
    /// and so everything the command started, wherever it went.
    ///
    /// # Errors
    /// [`NsError::Io`] if it cannot start.
    pub fn spawn_command(&self, argv: &[String], cwd: Option<&Path>) -> Result<Child, NsError> {
        use std::os::unix::process::CommandExt;
        let setpriv = find_command("setpriv").unwrap_or_else(|| PathBuf::from("setpriv"));
        let unshare = find_command("unshare").unwrap_or_else(|| PathBuf::from("unshare"));
        let argv = argv.to_vec();
        let cwd = cwd.map(Path::to_path_buf);
        let what = format!(
            "starting `{}` on host {}",
            argv.last().map_or("", String::as_str),
            self.name
        );
        self.run(move || {
            let mut c = Command::new(setpriv);
            c.arg("--pdeathsig")
                .arg("KILL")
                .arg("--")
                .arg(unshare)
                .args(["--pid", "--fork", "--kill-child=KILL", "--", "sh", "-c"])
                .arg("\"$@\" & wait $!")
                .arg("cclab-init")
                .args(argv)
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .process_group(0);
            if let Some(d) = cwd {
                c.current_dir(d);
            }
            c.spawn()
        })
        .map_err(io_err(what))
    }

    /// Run `program args` inside the host's namespace and return its standard output.
    ///
    /// # Errors
    /// [`NsError::Io`] if it fails.
    pub fn output(&self, program: &'static str, args: Vec<String>) -> Result<String, NsError> {
        self.run(move || {
            let a: Vec<&str> = args.iter().map(String::as_str).collect();
            run(program, &a)
        })
    }
}

/// Stop commands started by [`Host::spawn_command`]: `SIGTERM` to each one's process group,
/// then, for those still running after `grace`, `SIGKILL` to the init of its PID namespace
/// (which takes the namespace's every process with it), and to `unshare` if it has not ended
/// after another `grace`. Returns once every
/// `unshare` has ended, that is once every namespace is empty (an init's exit waits for the
/// other processes of its namespace to end, `zap_pid_ns_processes` in Linux
/// `kernel/pid_namespace.c`, and `unshare` waits for the init).
pub fn stop_command(children: &mut [&mut Child], grace: std::time::Duration) {
    use nix::sys::signal::{Signal, kill, killpg};
    use nix::unistd::Pid;
    let pid = |c: &Child| Pid::from_raw(i32::try_from(c.id()).unwrap_or(i32::MAX));
    for c in children.iter_mut() {
        if matches!(c.try_wait(), Ok(None)) {
            let _ = killpg(pid(c), Signal::SIGTERM);
        }
    }
    let t0 = std::time::Instant::now();
    while t0.elapsed() < grace
        && children
            .iter_mut()
            .any(|c| matches!(c.try_wait(), Ok(None)))
    {
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    for c in children.iter_mut() {
        if matches!(c.try_wait(), Ok(None)) {
            // The init is `unshare`'s only child.
            let p = c.id();
            let children_file = format!("/proc/{p}/task/{p}/children");
            for init in std::fs::read_to_string(children_file)
                .unwrap_or_default()
                .split_whitespace()
                .filter_map(|w| w.parse::<i32>().ok())
            {
                let _ = kill(Pid::from_raw(init), Signal::SIGKILL);
            }
        }
    }
    // `unshare` ends once its namespace is empty; it is killed itself only if it does not.
    let t0 = std::time::Instant::now();
    for c in children.iter_mut() {
        while matches!(c.try_wait(), Ok(None)) && t0.elapsed() < grace {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        if matches!(c.try_wait(), Ok(None)) {
            let _ = c.kill();
        }
        let _ = c.wait();
    }
}

impl Drop for Host {
    fn drop(&mut self) {
        self.jobs = None;
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_round_trip() {
        assert_eq!(host_addr(0), Ipv4Addr::new(10, 77, 0, 1));
        assert_eq!(host_addr(300), Ipv4Addr::new(10, 77, 1, 45));
        for i in [0, 1, 254, 255, 300, 65_000] {
            assert_eq!(host_of(host_addr(i).octets()), Some(i));
        }
        assert_eq!(host_of([10, 77, 0, 0]), None);
        assert_eq!(host_of([10, 78, 0, 1]), None);
    }
}
