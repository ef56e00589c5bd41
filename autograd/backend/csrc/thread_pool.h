/* A pool of worker threads for the compiled kernels (part of _native.c, included once).
 *
 * Why not autograd's Python threads (threads.py): handing a chunk to one of them and waiting for
 * it costs 15-40 us, as much as the whole of a batch-1 product. Here a worker that finished a
 * chunk spins for a short while (spin_nanoseconds) watching for the next one, so a kernel
 * called within that time starts on all threads in about a microsecond; after it the worker
 * sleeps on a condition variable and wakes in a few. What two cores buy a small product is more
 * than twice one: each core's L2 (1 MB on the reference CPU) holds its half of a 1.6 MB weight
 * matrix, which one core's cannot.
 *
 * parallel(task, context, length, parts) runs task(context, start, stop) over [0, length) cut
 * into `parts` contiguous chunks, each handed out as POOL_SLICES slices in order: the caller
 * runs the first chunk, worker k the k-th (so a weight's columns stay with one core from call
 * to call), and a thread that has finished its own chunk takes the slices left in the others
 * (a worker the system stopped or slowed holds up only the slice it is in); it returns when
 * all have finished. Any cut gives the same result: each index of a task is computed alone.
 * The tasks must not touch Python objects (the caller has released the GIL). One caller at a
 * time uses the workers; another one meanwhile runs its task alone.
 * Workers start on first use (importing the module starts none) and a forked child starts its
 * own. Without POSIX threads (Windows) every task runs on the calling thread. */

typedef void (*Task)(void *context, Py_ssize_t start, Py_ssize_t stop);

/* Elements a thread must have before a row pass (one pass over each row: layer normalization,
 * a convolution's epilogue) is split */
#define ROW_MIN_WORK_PER_THREAD (1 << 14)

/* The parts of a row pass over `rows` rows of `width`: at most `threads`, each with
 * ROW_MIN_WORK_PER_THREAD elements or more, 1 at least. */
static int row_parts(Py_ssize_t rows, Py_ssize_t width, int threads)
{
    Py_ssize_t most = rows * width / ROW_MIN_WORK_PER_THREAD;
    if (most > rows)
        most = rows;
    return threads < most ? threads : (int)(most > 1 ? most : 1);
}

#if defined(__unix__) || defined(__APPLE__)
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <time.h>

#define POOL_MAX_WORKERS 15
/* Slices of each chunk, handed out one at a time: what another thread can take over. When
 * the host slowed the second core for a while (two threads then ran SqueezeNet's batch-1
 * forward no faster than one), 4 made it 0.7-3.5% faster; elsewhere it was level, and 16
 * 1-1.4% slower than 4 (benchmarks/NOTES.md, twenty-third session). */
#define POOL_SLICES 4
/* How long a worker that finished a chunk spins before it sleeps (pool_spin). A forward's
 * Python between two kernels often takes longer than 50 us, after which a sleeping worker
 * had to be woken for each kernel: after an idle pause SqueezeNet's batch-1 forward took
 * 1.8-2.5x onnxruntime's with a 50 us spin, 1.5-1.7x with 0.5-2 ms (benchmarks/NOTES.md). */
static atomic_long spin_nanoseconds = 1000000L;

#if defined(__x86_64__) || defined(__i386__)
#define CPU_RELAX() __builtin_ia32_pause()
#else
#define CPU_RELAX() ((void)0)
#endif

static struct {
    pthread_mutex_t lock;
    pthread_cond_t wake;
    atomic_ulong generation;         /* bumped once per task handed out */
    atomic_int taken[POOL_MAX_WORKERS + 1];      /* slices of part k handed out */
    atomic_int done;                 /* slices of the current task finished */
    atomic_int sleeping;             /* workers waiting on `wake` */
    atomic_int busy;                 /* a caller holds the workers */
    int workers;                     /* started */
    unsigned long created_at;        /* the generation a new worker starts from */
    Task task;
    void *context;
    Py_ssize_t length;
    int parts;
    atomic_int parts_posted;         /* `parts`, published with the flags */
} pool = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER};

static long monotonic_nanoseconds(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return now.tv_sec * 1000000000L + now.tv_nsec;
}

/* Runs the slices of part `part` of the current task that no thread has taken yet, in
 * order. A part's slices are handed out once per task: the counters are cleared (after the
 * task's fields are written) before the task is handed out, and the previous task ended only
 * when all of its slices were done, so a thread that takes a slice, however late it woke,
 * reads the fields of the task that slice belongs to. */
static void run_part(int part)
{
    for (;;) {
        if (part >= atomic_load(&pool.parts_posted))
            return;
        int slice = atomic_fetch_add(&pool.taken[part], 1);
        if (slice >= POOL_SLICES)
            return;
        Py_ssize_t first = pool.length * part / pool.parts;
        Py_ssize_t size = pool.length * (part + 1) / pool.parts - first;
        Py_ssize_t start = first + size * slice / POOL_SLICES;
        Py_ssize_t stop = first + size * (slice + 1) / POOL_SLICES;
        if (start < stop)
            pool.task(pool.context, start, stop);
        atomic_fetch_add(&pool.done, 1);
    }
}

/* Part `own` first (worker k's part k, the caller's 0: the same core for the same data from
 * call to call), then the slices left in the others: a thread the system stopped or slowed
 * in the middle of its part holds up only the slice it is in. */
static void run_parts(int own, int parts)
{
    run_part(own);
    for (int part = 0; part < parts; part++)
        if (part != own)
            run_part(part);
}

/* Waits until the generation moves past `seen`: spinning first, yielding the core to any
 * other runnable thread (OpenBLAS's, the next GEMM's), then asleep. */
static unsigned long wait_for_task(unsigned long seen)
{
    unsigned long now_at;
    long deadline = 0;
    for (int spins = 1; (now_at = atomic_load(&pool.generation)) == seen; spins++) {
        CPU_RELAX();
        if (spins % 64)
            continue;
        sched_yield();
        long now = monotonic_nanoseconds();
        if (deadline == 0) {
            deadline = now + atomic_load(&spin_nanoseconds);
            continue;
        }
        if (now < deadline)
            continue;
        /* Asleep. `sleeping` is raised before `generation` is read again, and the caller bumps
         * `generation` before it reads `sleeping` (both sequentially consistent), so either
         * this worker sees the new task or the caller sees it asleep and wakes it. */
        pthread_mutex_lock(&pool.lock);
        atomic_fetch_add(&pool.sleeping, 1);
        while (atomic_load(&pool.generation) == seen)
            pthread_cond_wait(&pool.wake, &pool.lock);
        atomic_fetch_sub(&pool.sleeping, 1);
        pthread_mutex_unlock(&pool.lock);
        deadline = 0;
    }
    return now_at;
}

static void *pool_worker(void *argument)
{
    int part = (int)(intptr_t)argument;
    unsigned long seen = pool.created_at;
    for (;;) {
        seen = wait_for_task(seen);
        if (part < atomic_load(&pool.parts_posted))
            run_parts(part, atomic_load(&pool.parts_posted));
    }
    return NULL;
}

/* Starts workers until `wanted` run (fewer if the system refuses threads); returns how many
 * run. Called by the caller that holds `busy`, with no task in flight. */
static int start_workers(int wanted)
{
    pool.created_at = atomic_load(&pool.generation);
    while (pool.workers < wanted) {
        pthread_attr_t attributes;
        pthread_t thread;
        pthread_attr_init(&attributes);
        pthread_attr_setdetachstate(&attributes, PTHREAD_CREATE_DETACHED);
        int failed = pthread_create(&thread, &attributes, pool_worker,
                                    (void *)(intptr_t)(pool.workers + 1));
        pthread_attr_destroy(&attributes);
        if (failed)
            break;
        pool.workers++;
    }
    return pool.workers;
}

/* In a forked child the workers do not exist: it starts its own on first use. */
static void forget_workers_in_child(void)
{
    pthread_mutex_init(&pool.lock, NULL);
    pthread_cond_init(&pool.wake, NULL);
    atomic_store(&pool.sleeping, 0);
    atomic_store(&pool.parts_posted, 0);
    atomic_store(&pool.busy, 0);
    pool.workers = 0;
}

static void parallel(Task task, void *context, Py_ssize_t length, int parts)
{
    static int fork_handler_registered = 0;
    int expected = 0;
    if (parts > POOL_MAX_WORKERS + 1)
        parts = POOL_MAX_WORKERS + 1;
    if (parts > length)
        parts = (int)length;
    if (parts < 2 || !atomic_compare_exchange_strong(&pool.busy, &expected, 1)) {
        task(context, 0, length);
        return;
    }
    if (!fork_handler_registered)
        fork_handler_registered = pthread_atfork(NULL, NULL, forget_workers_in_child) == 0;
    if (pool.workers < parts - 1 && start_workers(parts - 1) + 1 < parts)
        parts = pool.workers + 1;
    if (parts < 2) {
        atomic_store(&pool.busy, 0);
        task(context, 0, length);
        return;
    }
    pool.task = task;
    pool.context = context;
    pool.length = length;
    pool.parts = parts;
    atomic_store(&pool.done, 0);
    for (int part = 0; part < parts; part++)
        atomic_store(&pool.taken[part], 0);
    atomic_store(&pool.parts_posted, parts);
    atomic_fetch_add(&pool.generation, 1);
    if (atomic_load(&pool.sleeping) > 0) {
        pthread_mutex_lock(&pool.lock);
        pthread_cond_broadcast(&pool.wake);
        pthread_mutex_unlock(&pool.lock);
    }
    /* The caller runs part 0, then every slice no worker has taken yet: on a machine with
     * more runnable threads than cores a worker may not run for milliseconds, and waiting for
     * it would idle the caller that long. Then it waits for the slices that workers took. */
    run_parts(0, parts);
    for (int spins = 1; atomic_load(&pool.done) < parts * POOL_SLICES; spins++) {
        CPU_RELAX();
        if (spins % 64 == 0)
            sched_yield();
    }
    atomic_store(&pool.parts_posted, 0);
    atomic_store(&pool.busy, 0);
}

#else

static void parallel(Task task, void *context, Py_ssize_t length, int parts)
{
    (void)parts;
    task(context, 0, length);
}

#endif

/* pool_spin(nanoseconds): how long a worker spins before it sleeps, set where not negative;
 * returns the value before (0 where every task runs on the calling thread) */
static PyObject *pool_spin(PyObject *self, PyObject *argument)
{
    long long value = PyLong_AsLongLong(argument);
    if (value == -1 && PyErr_Occurred())
        return NULL;
#if defined(__unix__) || defined(__APPLE__)
    long previous = value < 0 ? atomic_load(&spin_nanoseconds)
                              : atomic_exchange(&spin_nanoseconds, (long)value);
    return PyLong_FromLong(previous);
#else
    return PyLong_FromLong(0);
#endif
}
