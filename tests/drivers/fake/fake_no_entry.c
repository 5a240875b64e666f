/* fake_no_entry.c -- a shared object that is not a driver. */
int fake_something(void);
int fake_something(void)
{
	return 42;
}
