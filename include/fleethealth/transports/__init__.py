"""Pull transports: each lists a host's source folder and copies chosen files into landing."""
