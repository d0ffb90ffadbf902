################################################################################
#
# rtbench
#
################################################################################

# The release tag and the rtbench repository, filled in with rtbench.hash
# for each release by scripts/release-packaging.py (docs/RELEASING.md). Until
# the first release the address is a placeholder: point RTBENCH_SITE at your
# mirror and RTBENCH_VERSION at a tag or commit (README.md).
RTBENCH_VERSION = v0.1.0
RTBENCH_SITE = https://git.example.org/rtbench.git
RTBENCH_SITE_METHOD = git
# rtbench itself, and the linked crates that offer MIT but no Apache-2.0
# (every linked crate offers MIT). CI checks the list against Cargo.lock.
RTBENCH_LICENSE = MIT or Apache-2.0 (rtbench), MIT (crates byteorder, libm, memchr, nix, simd-adler32, strsim, winnow, zmij)
RTBENCH_LICENSE_FILES = LICENSE-MIT LICENSE-APACHE
# The download is an archive without .git: `rtbench --version` names the
# release from here (build.rs).
RTBENCH_CARGO_ENV = RTBENCH_REVISION=$(RTBENCH_VERSION)

define RTBENCH_INSTALL_CONFIG
	$(INSTALL) -D -m 0644 $(@D)/systemd/rtbench.toml \
		$(TARGET_DIR)/etc/rtbench/rtbench.toml
endef
RTBENCH_POST_INSTALL_TARGET_HOOKS += RTBENCH_INSTALL_CONFIG

# A man page per command and the shell completions, generated from the command
# line's definitions (docs/man, docs/completions), and rtbench.toml(5), generated
# from the configuration template. Buildroot's target-finalize removes
# /usr/share/man from every target, and the completions of shells that are not
# selected.
define RTBENCH_INSTALL_DOCS
	$(INSTALL) -d $(TARGET_DIR)/usr/share/man/man1 $(TARGET_DIR)/usr/share/man/man5
	$(INSTALL) -m 0644 $(@D)/docs/man/*.1 $(TARGET_DIR)/usr/share/man/man1/
	$(INSTALL) -m 0644 $(@D)/docs/man/*.5 $(TARGET_DIR)/usr/share/man/man5/
	$(INSTALL) -D -m 0644 $(@D)/docs/completions/rtbench.bash \
		$(TARGET_DIR)/usr/share/bash-completion/completions/rtbench
	$(INSTALL) -D -m 0644 $(@D)/docs/completions/_rtbench \
		$(TARGET_DIR)/usr/share/zsh/site-functions/_rtbench
	$(INSTALL) -D -m 0644 $(@D)/docs/completions/rtbench.fish \
		$(TARGET_DIR)/usr/share/fish/vendor_completions.d/rtbench.fish
endef
RTBENCH_POST_INSTALL_TARGET_HOOKS += RTBENCH_INSTALL_DOCS

# Buildroot runs "systemctl preset-all" on the target: every installed unit
# is enabled unless a preset file says otherwise. For SysV init, the script is
# only put in /etc/init.d when it is to run at boot.
ifeq ($(BR2_PACKAGE_RTBENCH_AUTOSTART),y)
RTBENCH_PRESET = enable
RTBENCH_SYSV_SCRIPT = /etc/init.d/S95rtbench
else
RTBENCH_PRESET = disable
RTBENCH_SYSV_SCRIPT = /usr/share/rtbench/S95rtbench
endif

# The field monitor's unit (rtbench monitor) is disabled unless asked for.
ifeq ($(BR2_PACKAGE_RTBENCH_MONITOR_AUTOSTART),y)
RTBENCH_MONITOR_PRESET = enable
else
RTBENCH_MONITOR_PRESET = disable
endif

# rtbench as cyclictest and pmqtest (docs/COMPAT.md); Config.in keeps the
# option away from rt-tests, which installs the real programs there.
ifeq ($(BR2_PACKAGE_RTBENCH_RT_TESTS_NAMES),y)
define RTBENCH_INSTALL_RT_TESTS_NAMES
	mkdir -p $(TARGET_DIR)/usr/bin
	ln -sf rtbench $(TARGET_DIR)/usr/bin/cyclictest
	ln -sf rtbench $(TARGET_DIR)/usr/bin/pmqtest
endef
RTBENCH_POST_INSTALL_TARGET_HOOKS += RTBENCH_INSTALL_RT_TESTS_NAMES
endif

# Optional: keep the journal across reboots (systemd/journald-rtbench-persistent.conf).
ifeq ($(BR2_PACKAGE_RTBENCH_PERSISTENT_JOURNAL),y)
define RTBENCH_INSTALL_PERSISTENT_JOURNAL
	$(INSTALL) -D -m 0644 $(@D)/systemd/journald-rtbench-persistent.conf \
		$(TARGET_DIR)/usr/lib/systemd/journald.conf.d/50-rtbench-persistent.conf
endef
endif

define RTBENCH_INSTALL_INIT_SYSTEMD
	$(RTBENCH_INSTALL_PERSISTENT_JOURNAL)
	$(INSTALL) -D -m 0644 $(@D)/systemd/rtbench.service \
		$(TARGET_DIR)/usr/lib/systemd/system/rtbench.service
	$(INSTALL) -D -m 0644 $(@D)/systemd/rtbench-monitor.service \
		$(TARGET_DIR)/usr/lib/systemd/system/rtbench-monitor.service
	$(INSTALL) -D -m 0644 $(@D)/systemd/rtbench.catalog \
		$(TARGET_DIR)/usr/lib/systemd/catalog/rtbench.catalog
	mkdir -p $(TARGET_DIR)/usr/lib/systemd/system-preset
	printf '%s rtbench.service\n%s rtbench-monitor.service\n' \
		$(RTBENCH_PRESET) $(RTBENCH_MONITOR_PRESET) > \
		$(TARGET_DIR)/usr/lib/systemd/system-preset/50-rtbench.preset
endef

define RTBENCH_INSTALL_INIT_SYSV
	$(INSTALL) -D -m 0755 $(RTBENCH_PKGDIR)/S95rtbench \
		$(TARGET_DIR)$(RTBENCH_SYSV_SCRIPT)
endef

$(eval $(cargo-package))
