//! shmem
