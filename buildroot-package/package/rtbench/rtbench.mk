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
RTBENCH_LICENSE = MIT or Apache-2.0 (rtbench), MIT (crates memchr, nix, simd-adler32, strsim, winnow, zmij)
RTBENCH_LICENSE_FILES = LICENSE-MIT LICENSE-APACHE
# The download is an archive without .git: `rtbench --version` names the
# release from here (build.rs).
RTBENCH_CARGO_ENV = RTBENCH_REVISION=$(RTBENCH_VERSION)

# Build options: the Cargo features of Cargo.toml. cargo install builds
# again, so it gets the same features as cargo build.
ifeq ($(BR2_PACKAGE_RTBENCH_PLOT),y)
RTBENCH_FEATURES += plot
endif
ifeq ($(BR2_PACKAGE_RTBENCH_MONITOR),y)
RTBENCH_FEATURES += monitor
endif
ifeq ($(BR2_PACKAGE_RTBENCH_DIAGNOSE),y)
RTBENCH_FEATURES += diagnose
endif
ifeq ($(BR2_PACKAGE_RTBENCH_EXPLAIN),y)
RTBENCH_FEATURES += explain
endif
RTBENCH_CARGO_BUILD_OPTS = \
	--no-default-features \
	--features "$(subst $(space),$(comma),$(strip $(RTBENCH_FEATURES)))"
RTBENCH_CARGO_INSTALL_OPTS = $(RTBENCH_CARGO_BUILD_OPTS)

define RTBENCH_INSTALL_CONFIG
	$(INSTALL) -D -m 0644 $(@D)/systemd/rtbench.toml \
		$(TARGET_DIR)/etc/rtbench/rtbench.toml
endef
RTBENCH_POST_INSTALL_TARGET_HOOKS += RTBENCH_INSTALL_CONFIG

# The shell completions generated from the command line's definitions
# (docs/completions), for the shells the target has. No man pages: Buildroot's
# target-finalize removes /usr/share/man from every target.
ifeq ($(BR2_PACKAGE_BASH_COMPLETION),y)
define RTBENCH_INSTALL_BASH_COMPLETION
	$(INSTALL) -D -m 0644 $(@D)/docs/completions/rtbench.bash \
		$(TARGET_DIR)/usr/share/bash-completion/completions/rtbench
endef
RTBENCH_POST_INSTALL_TARGET_HOOKS += RTBENCH_INSTALL_BASH_COMPLETION
endif

ifeq ($(BR2_PACKAGE_ZSH),y)
define RTBENCH_INSTALL_ZSH_COMPLETION
	$(INSTALL) -D -m 0644 $(@D)/docs/completions/_rtbench \
		$(TARGET_DIR)/usr/share/zsh/site-functions/_rtbench
endef
RTBENCH_POST_INSTALL_TARGET_HOOKS += RTBENCH_INSTALL_ZSH_COMPLETION
endif

ifeq ($(BR2_PACKAGE_FISH),y)
define RTBENCH_INSTALL_FISH_COMPLETION
	$(INSTALL) -D -m 0644 $(@D)/docs/completions/rtbench.fish \
		$(TARGET_DIR)/usr/share/fish/vendor_completions.d/rtbench.fish
endef
RTBENCH_POST_INSTALL_TARGET_HOOKS += RTBENCH_INSTALL_FISH_COMPLETION
endif

# Buildroot runs "systemctl preset-all" on the target: every installed unit
# is enabled unless a preset file disables it, so a unit that is not to run
# at boot gets one (50-rtbench.preset, 50-rtbench-monitor.preset). For SysV
# init, the script is only put in /etc/init.d when it is to run at boot.
ifeq ($(BR2_PACKAGE_RTBENCH_AUTOSTART),y)
RTBENCH_SYSV_SCRIPT = /etc/init.d/S95rtbench
else
RTBENCH_SYSV_SCRIPT = /usr/share/rtbench/S95rtbench
define RTBENCH_INSTALL_PRESET
	$(INSTALL) -D -m 0644 $(RTBENCH_PKGDIR)/50-rtbench.preset \
		$(TARGET_DIR)/usr/lib/systemd/system-preset/50-rtbench.preset
endef
endif

# The field monitor's unit (rtbench monitor) is disabled unless asked for.
ifeq ($(BR2_PACKAGE_RTBENCH_MONITOR),y)
define RTBENCH_INSTALL_MONITOR_UNIT
	$(INSTALL) -D -m 0644 $(@D)/systemd/rtbench-monitor.service \
		$(TARGET_DIR)/usr/lib/systemd/system/rtbench-monitor.service
endef
ifneq ($(BR2_PACKAGE_RTBENCH_MONITOR_AUTOSTART),y)
define RTBENCH_INSTALL_MONITOR_PRESET
	$(INSTALL) -D -m 0644 $(RTBENCH_PKGDIR)/50-rtbench-monitor.preset \
		$(TARGET_DIR)/usr/lib/systemd/system-preset/50-rtbench-monitor.preset
endef
endif
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
	$(RTBENCH_INSTALL_MONITOR_UNIT)
	$(INSTALL) -D -m 0644 $(@D)/systemd/rtbench.catalog \
		$(TARGET_DIR)/usr/lib/systemd/catalog/rtbench.catalog
	$(RTBENCH_INSTALL_PRESET)
	$(RTBENCH_INSTALL_MONITOR_PRESET)
endef

define RTBENCH_INSTALL_INIT_SYSV
	$(INSTALL) -D -m 0755 $(RTBENCH_PKGDIR)/S95rtbench \
		$(TARGET_DIR)$(RTBENCH_SYSV_SCRIPT)
endef

$(eval $(cargo-package))
