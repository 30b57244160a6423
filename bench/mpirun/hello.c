/* The smallest MPI program: its start-up (MPI_Init) is what the
 * benchmark measures, and Open MPI loads the node's topology in it. */
#include <mpi.h>

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  MPI_Finalize();
  return 0;
}
