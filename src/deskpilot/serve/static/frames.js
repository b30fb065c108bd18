"use strict"; window.deskpilotFrames = null;
