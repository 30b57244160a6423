/* A small PMIx job: one PMIx 4.2 server sharing the node's topology with
 * the clients it forks (PMIX_SERVER_SHARE_TOPOLOGY), and the clients
 * obtaining it the ways PMIx clients do.
 *
 *   pmix_job server NCLIENTS TMPDIR pmix|host|alone load|keys
 *     pmix: PMIx loads the topology itself (hwloc_topology_load) and
 *           shares it;
 *     alone: PMIx loads it and does not share it (every client loads
 *           its own);
 *     host: the server loads it with hwloc and hands it to PMIx as
 *           PMIX_TOPOLOGY2, as a resource manager does;
 *     load: clients call PMIx_Load_topology (PMIx 4.1 and later);
 *     keys: clients adopt the segment themselves from the
 *           PMIX_HWLOC_SHMEM_* keys (PMIx 3.x clients).
 *   pmix_job client load|keys   (started by the server, with setup_fork's
 *                                environment)
 * PMIX_JOB_CLIENT_LIBRARY_PATH, when set, is the clients' LD_LIBRARY_PATH
 * (empty: none), so that clients may run on another libhwloc than the
 * server.
 *
 * Every process prints one block:
 *   BEGIN <role> <rank> <pid>
 *   lib <file>                       (the libhwloc this process runs on)
 *   shmem <file> <addr> <size>      (the PMIX_HWLOC_SHMEM_* keys, clients)
 *   adopt <rc> <errno>               (keys: hwloc_shmem_topology_adopt)
 *   mapped <yes|no>                  (the shmem file is mapped here)
 *   load_us <microseconds>           (getting the topology, clients)
 *   hwm_kb <kB>                      (peak resident memory, clients)
 *   fp <fingerprint line>...
 *   END <role> <rank>
 * The fingerprint is the topology's levels (type and count), synthetic
 * description and the cpuset and nodeset of every object, so that it
 * compares between processes and between libraries.
 */
#define _GNU_SOURCE
#include <pmix.h>
#include <pmix_server.h>
#include <hwloc.h>
#include <hwloc/shmem.h>

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <fcntl.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static void die(const char *what, int rc)
{
    fprintf(stderr, "pmix_job: %s failed: %s (%d)\n", what, PMIx_Error_string(rc), rc);
    exit(2);
}

/* Whether a file named NAME is mapped in this process. */
static int mapped(const char *name)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[4096];
    int found = 0;
    if (!f)
        return 0;
    while (fgets(line, sizeof line, f))
        if (name && strstr(line, name))
            found = 1;
    fclose(f);
    return found;
}

/* The file of the libhwloc this process runs on. */
static void print_lib(void)
{
    Dl_info info;
    if (dladdr((void *) hwloc_topology_init, &info) && info.dli_fname)
        printf("lib %s\n", info.dli_fname);
    else
        printf("lib unknown\n");
}

static void fingerprint(hwloc_topology_t topo)
{
    char buf[4096];
    int depth = hwloc_topology_get_depth(topo);
    for (int d = 0; d < depth; d++) {
        hwloc_obj_type_t t = hwloc_get_depth_type(topo, d);
        printf("fp level %d %s %u\n", d, hwloc_obj_type_string(t),
               hwloc_get_nbobjs_by_depth(topo, d));
    }
    printf("fp numanodes %d\n", hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE));
    if (hwloc_topology_export_synthetic(topo, buf, sizeof buf, 0) >= 0)
        printf("fp synthetic %s\n", buf);
    else
        printf("fp synthetic (none: %s)\n", strerror(errno));
    for (int d = 0; d < depth; d++) {
        for (unsigned i = 0; i < hwloc_get_nbobjs_by_depth(topo, d); i++) {
            hwloc_obj_t o = hwloc_get_obj_by_depth(topo, d, i);
            char *cs = NULL, *ns = NULL;
            hwloc_bitmap_list_asprintf(&cs, o->cpuset);
            hwloc_bitmap_list_asprintf(&ns, o->nodeset);
            printf("fp obj %s L#%u P#%u cpuset %s nodeset %s\n",
                   hwloc_obj_type_string(o->type), o->logical_index, o->os_index,
                   cs ? cs : "-", ns ? ns : "-");
            free(cs);
            free(ns);
        }
    }
}

/* Microseconds of a monotonic clock. */
static long long now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long) ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* This process's peak resident memory (VmHWM), in kB. */
static long hwm_kb(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;
    if (!f)
        return -1;
    while (fgets(line, sizeof line, f))
        if (1 == sscanf(line, "VmHWM: %ld kB", &kb))
            break;
    fclose(f);
    return kb;
}

/* The shared-memory rendezvous keys of the job, if the server set them. */
static char *shmem_keys(const pmix_proc_t *me, size_t *addrp, size_t *sizep)
{
    pmix_proc_t wildcard;
    pmix_info_t info;
    pmix_value_t *val = NULL;
    char *file = NULL;
    size_t addr = 0, size = 0;
    PMIX_LOAD_PROCID(&wildcard, me->nspace, PMIX_RANK_WILDCARD);
    PMIX_INFO_LOAD(&info, PMIX_OPTIONAL, NULL, PMIX_BOOL);
    if (PMIX_SUCCESS == PMIx_Get(&wildcard, PMIX_HWLOC_SHMEM_FILE, &info, 1, &val)
        && val->type == PMIX_STRING) {
        file = strdup(val->data.string);
        PMIX_VALUE_RELEASE(val);
        if (PMIX_SUCCESS == PMIx_Get(&wildcard, PMIX_HWLOC_SHMEM_ADDR, &info, 1, &val)) {
            addr = val->data.size;
            PMIX_VALUE_RELEASE(val);
        }
        if (PMIX_SUCCESS == PMIx_Get(&wildcard, PMIX_HWLOC_SHMEM_SIZE, &info, 1, &val)) {
            size = val->data.size;
            PMIX_VALUE_RELEASE(val);
        }
        printf("shmem %s %#zx %zu\n", file, addr, size);
    } else {
        printf("shmem none\n");
    }
    *addrp = addr;
    *sizep = size;
    return file;
}

/* PMIx 3.x's way (PMIx's own "HWLOC topology" guide): adopt the segment
 * named by the keys. NULL when it cannot be adopted. */
static hwloc_topology_t adopt(const char *file, size_t addr, size_t size)
{
    hwloc_topology_t topo = NULL;
    int fd, rc;
    if (!file || (fd = open(file, O_RDONLY)) < 0) {
        printf("adopt -1 %d\n", file ? errno : ENOENT);
        return NULL;
    }
    rc = hwloc_shmem_topology_adopt(&topo, fd, 0, (void *) addr, size, 0);
    printf("adopt %d %d\n", rc, rc ? errno : 0);
    close(fd);
    return rc ? NULL : topo;
}

static int client(const char *way)
{
    pmix_proc_t me;
    pmix_topology_t ptopo;
    pmix_status_t rc;
    hwloc_topology_t topo, own = NULL;
    size_t addr, size;
    long long start;
    char *file;

    setvbuf(stdout, NULL, _IOFBF, 1 << 20);
    if (PMIX_SUCCESS != (rc = PMIx_Init(&me, NULL, 0)))
        die("PMIx_Init", rc);
    printf("BEGIN client %u %d\n", me.rank, (int) getpid());
    print_lib();
    file = shmem_keys(&me, &addr, &size);
    start = now_us();
    /* keys: a segment that cannot be adopted leaves PMIx's way (the
     * "adopt" line says why). */
    if (0 == strcmp(way, "keys") && (own = adopt(file, addr, size))) {
        topo = own;
    } else {
        PMIX_TOPOLOGY_CONSTRUCT(&ptopo);
        if (PMIX_SUCCESS != (rc = PMIx_Load_topology(&ptopo)))
            die("PMIx_Load_topology", rc);
        topo = (hwloc_topology_t) ptopo.topology;
    }
    printf("load_us %lld\n", now_us() - start);
    printf("hwm_kb %ld\n", hwm_kb());
    printf("mapped %s\n", mapped(file) ? "yes" : "no");
    fingerprint(topo);
    printf("END client %u\n", me.rank);
    fflush(stdout);
    free(file);
    /* PMIx owns the topology it loaded; the one adopted here is ours. */
    if (own)
        hwloc_topology_destroy(own);
    if (PMIX_SUCCESS != (rc = PMIx_Finalize(NULL, 0)))
        die("PMIx_Finalize", rc);
    return 0;
}

/* Completion of the server's non-blocking registrations. */
static volatile int done;
static volatile pmix_status_t done_status;
static void op_done(pmix_status_t status, void *cbdata)
{
    (void) cbdata;
    done_status = status;
    done = 1;
}
static void wait_done(const char *what)
{
    while (!done)
        usleep(1000);
    if (done_status != PMIX_SUCCESS)
        die(what, done_status);
    done = 0;
}

static int server(int n, const char *tmpdir, const char *mode, const char *way,
                  const char *self)
{
    pmix_server_module_t module;
    pmix_info_t info[4];
    size_t ninfo = 0;
    pmix_status_t rc;
    pmix_topology_t given = PMIX_TOPOLOGY_STATIC_INIT;
    hwloc_topology_t host_topo = NULL;
    pmix_nspace_t nspace;
    pid_t pids[64];

    memset(&module, 0, sizeof module);
    PMIX_INFO_LOAD(&info[ninfo], PMIX_SERVER_TMPDIR, tmpdir, PMIX_STRING); ninfo++;
    PMIX_INFO_LOAD(&info[ninfo], PMIX_SYSTEM_TMPDIR, tmpdir, PMIX_STRING); ninfo++;
    if (strcmp(mode, "alone")) {
        PMIX_INFO_LOAD(&info[ninfo], PMIX_SERVER_SHARE_TOPOLOGY, NULL, PMIX_BOOL);
        ninfo++;
    }
    if (0 == strcmp(mode, "host")) {
        if (hwloc_topology_init(&host_topo) || hwloc_topology_load(host_topo)) {
            fprintf(stderr, "pmix_job: hwloc_topology_load failed\n");
            return 2;
        }
        given.source = "hwloc";
        given.topology = host_topo;
        PMIX_INFO_LOAD(&info[ninfo], PMIX_TOPOLOGY2, &given, PMIX_TOPO); ninfo++;
    }
    if (PMIX_SUCCESS != (rc = PMIx_server_init(&module, info, ninfo)))
        die("PMIx_server_init", rc);

    /* The job: N ranks on this node. */
    pmix_info_t job[7];
    uint32_t size = (uint32_t) n, spawned = 0;
    char peers[512] = "", host[256], *node_map = NULL, *proc_map = NULL;
    for (int i = 0; i < n; i++)
        snprintf(peers + strlen(peers), sizeof peers - strlen(peers), "%s%d", i ? "," : "", i);
    if (gethostname(host, sizeof host))
        strcpy(host, "localhost");
    if (PMIX_SUCCESS != (rc = PMIx_generate_regex(host, &node_map)))
        die("PMIx_generate_regex", rc);
    if (PMIX_SUCCESS != (rc = PMIx_generate_ppn(peers, &proc_map)))
        die("PMIx_generate_ppn", rc);
    PMIX_INFO_LOAD(&job[0], PMIX_UNIV_SIZE, &size, PMIX_UINT32);
    PMIX_INFO_LOAD(&job[1], PMIX_SPAWNED, &spawned, PMIX_UINT32);
    PMIX_INFO_LOAD(&job[2], PMIX_LOCAL_SIZE, &size, PMIX_UINT32);
    PMIX_INFO_LOAD(&job[3], PMIX_LOCAL_PEERS, peers, PMIX_STRING);
    PMIX_INFO_LOAD(&job[4], PMIX_NODE_MAP, node_map, PMIX_STRING);
    PMIX_INFO_LOAD(&job[5], PMIX_PROC_MAP, proc_map, PMIX_STRING);
    PMIX_INFO_LOAD(&job[6], PMIX_JOB_SIZE, &size, PMIX_UINT32);
    PMIX_LOAD_NSPACE(nspace, "wloc-pmix-job");
    if (PMIX_SUCCESS != (rc = PMIx_server_register_nspace(nspace, n, job, 7, op_done, NULL)))
        die("PMIx_server_register_nspace", rc);
    wait_done("registering the nspace");

    /* The server's own view, printed before the clients start. */
    pmix_topology_t mine;
    PMIX_TOPOLOGY_CONSTRUCT(&mine);
    if (PMIX_SUCCESS != (rc = PMIx_Load_topology(&mine)))
        die("PMIx_Load_topology (server)", rc);
    printf("BEGIN server 0 %d\n", (int) getpid());
    print_lib();
    fingerprint((hwloc_topology_t) mine.topology);
    printf("END server 0\n");
    fflush(stdout);

    for (int i = 0; i < n && i < 64; i++) {
        pmix_proc_t proc;
        char **env = NULL;
        PMIX_LOAD_PROCID(&proc, nspace, (pmix_rank_t) i);
        if (PMIX_SUCCESS != (rc = PMIx_server_register_client(&proc, getuid(), getgid(), NULL,
                                                              op_done, NULL)))
            die("PMIx_server_register_client", rc);
        wait_done("registering a client");
        /* The clients' libhwloc may differ from the server's. */
        const char *client_lib = getenv("PMIX_JOB_CLIENT_LIBRARY_PATH");
        if (client_lib && *client_lib)
            setenv("LD_LIBRARY_PATH", client_lib, 1);
        else if (client_lib)
            unsetenv("LD_LIBRARY_PATH");
        for (char **e = environ; *e; e++)
            PMIX_ARGV_APPEND(rc, env, *e);
        if (PMIX_SUCCESS != (rc = PMIx_server_setup_fork(&proc, &env)))
            die("PMIx_server_setup_fork", rc);
        pids[i] = fork();
        if (pids[i] == 0) {
            char *argv[] = {(char *) self, "client", (char *) way, NULL};
            execve(self, argv, env);
            perror("execve");
            _exit(127);
        }
        PMIX_ARGV_FREE(env);
    }
    int failed = 0;
    for (int i = 0; i < n && i < 64; i++) {
        int status;
        if (waitpid(pids[i], &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status)) {
            fprintf(stderr, "pmix_job: client %d failed (status %#x)\n", i, status);
            failed = 1;
        }
    }
    if (PMIX_SUCCESS != (rc = PMIx_server_finalize()))
        die("PMIx_server_finalize", rc);
    if (host_topo)
        hwloc_topology_destroy(host_topo);
    return failed;
}

int main(int argc, char **argv)
{
    if (argc >= 3 && 0 == strcmp(argv[1], "client"))
        return client(argv[2]);
    if (argc >= 6 && 0 == strcmp(argv[1], "server")) {
        char self[4096];
        ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
        if (len < 0) {
            perror("readlink /proc/self/exe");
            return 2;
        }
        self[len] = 0;
        return server(atoi(argv[2]), argv[3], argv[4], argv[5], self);
    }
    fprintf(stderr, "usage: %s server NCLIENTS TMPDIR pmix|host load|keys | client load|keys\n",
            argv[0]);
    return 2;
}
