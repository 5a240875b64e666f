return { filter = "yes" }
