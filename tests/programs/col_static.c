/* SPDX-License-Identifier: MIT */
/* Linked -static: `memscribe record` must refuse it, naming the file. */
int main(void)
{
    return 0;
}
