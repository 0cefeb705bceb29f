use super::*;
use crate::capabilities::WEB_PORTS;

fn confinement(ports: Option<Vec<u16>>, required: bool) -> Confinement {
    Confinement {
        read: Some(Vec::new()),
        write: Some(Vec::new()),
        ports,
        env: Some(Vec::new()),
        required,
    }
}

#[test]
fn code_that_may_do_anything_starts_programs_unconfined() {
    assert_eq!(Confinement::of(&Capabilities::all()), None);
    let sandbox = Confinement::of(&Capabilities::sandbox()).unwrap();
    assert_eq!(sandbox.ports, Some(Vec::new()));
    let reads_only = Capabilities {
        read: Some(Vec::new()),
        ..Capabilities::all()
    };
    let confined = Confinement::of(&reads_only).unwrap();
    assert_eq!((confined.write, confined.ports), (None, None));
}

#[test]
fn an_allow_net_entry_without_a_port_grants_the_web_ports() {
    let caps = Capabilities {
        net: Some(vec![
            "api.example.com".into(),
            "127.0.0.1:8080".into(),
            "[::1]:9000".into(),
            "host:not-a-port".into(),
        ]),
        ..Capabilities::sandbox()
    };
    let mut expected = vec![8080, 9000];
    expected.extend(WEB_PORTS);
    expected.sort_unstable();
    assert_eq!(caps.net_ports(), Some(expected));
    assert_eq!(Capabilities::all().net_ports(), None);
}

#[test]
fn a_kernel_without_landlock_refuses_only_when_confinement_is_required() {
    let missing = Landlock::Unavailable("none here".into());
    assert_eq!(confinable(&missing, &confinement(None, false)), Ok(false));
    let refused = confinable(&missing, &confinement(None, true)).unwrap_err();
    assert_eq!(
        refused,
        Refusal::Unavailable("Landlock is unavailable (none here)".into())
    );
    assert_eq!(
        confinable(&Landlock::Abi(1), &confinement(None, true)),
        Ok(true)
    );
}

#[test]
fn tcp_that_cannot_be_filtered_refuses_only_allowed_ports_when_required() {
    let ports = || Some(vec![443]);
    let old = Landlock::Abi(TCP_ABI - 1);
    assert!(matches!(
        confinable(&old, &confinement(ports(), true)),
        Err(Refusal::Unavailable(why)) if why.contains("TCP")
    ));
    assert_eq!(confinable(&old, &confinement(ports(), false)), Ok(true));
    assert_eq!(
        confinable(&old, &confinement(Some(Vec::new()), true)),
        Ok(true)
    );
    let new = Landlock::Abi(TCP_ABI);
    assert_eq!(confinable(&new, &confinement(ports(), true)), Ok(true));
}

#[test]
fn a_scripts_interpreters_are_followed_and_a_loop_ends() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("script");
    let middle = dir.path().join("middle");
    std::fs::write(&script, format!("#!  {} -x\necho\n", middle.display())).unwrap();
    std::fs::write(&middle, format!("#!{}\n", script.display())).unwrap();
    let spec = ProcessSpec {
        executable: Some(script.clone()),
        ..ProcessSpec::new(vec!["script".into()])
    };
    assert_eq!(program_files(&spec), [script.clone(), middle]);
    std::fs::write(&script, "no interpreter").unwrap();
    assert_eq!(program_files(&spec), [script]);
}

#[test]
fn the_program_is_found_as_the_kernel_finds_it() {
    let shell = ProcessSpec {
        shell: true,
        ..ProcessSpec::new(vec!["true".into()])
    };
    let sh = program_file(&shell).unwrap();
    assert!(sh.is_absolute() && sh.ends_with("sh"), "{}", sh.display());
    let dir = tempfile::tempdir().unwrap();
    let relative = ProcessSpec {
        cwd: Some(dir.path().to_path_buf()),
        ..ProcessSpec::new(vec!["./tool".into()])
    };
    assert_eq!(program_file(&relative), Some(dir.path().join("./tool")));
    let nowhere = ProcessSpec {
        env: vec![("PATH".into(), dir.path().display().to_string())],
        ..ProcessSpec::new(vec!["cat".into()])
    };
    assert_eq!(program_file(&nowhere), None);
}

#[test]
fn the_system_list_is_read_only_with_the_network_files_only_for_allowed_hosts() {
    let private = Path::new("/tmp/private");
    let closed = Grants::new(&confinement(Some(Vec::new()), false), Vec::new(), private);
    let read = closed.read.unwrap();
    assert!(read.contains(&PathBuf::from("/usr")));
    assert!(!read.contains(&PathBuf::from("/etc/resolv.conf")));
    assert!(!read
        .iter()
        .any(|p| p.starts_with("/proc") || p == Path::new("/etc")));
    assert_eq!(closed.read_write, [private, Path::new("/dev/null")]);
    let open = Grants::new(&confinement(Some(vec![443]), false), Vec::new(), private);
    assert!(open
        .read
        .unwrap()
        .contains(&PathBuf::from("/etc/resolv.conf")));
}
