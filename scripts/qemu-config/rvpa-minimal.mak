# Device configuration of the project's QEMU build (riscv64-softmmu):
# the virt board and what it selects, nothing else.  Linked into the
# QEMU tree as configs/devices/riscv64-softmmu/rvpa-minimal.mak and used
# with --without-default-devices --with-devices-riscv64=rvpa-minimal.
CONFIG_RISCV_VIRT=y
