/* placeholder so the archive is never empty */
int drvc_placeholder_unused(void);
int drvc_placeholder_unused(void) { return 0; }
